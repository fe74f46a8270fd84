/**
 * A trade as the person reads it (`ownClobTrade`, `ownClobTradesPage`): the person's own order(s) in
 * the trade, in the role they played — the exchange's top-level fields are the taker's order, a maker's
 * own side, size, price and token are in its `maker_orders` entry (PROTOCOL.md §5.4; the official
 * clients' `Trade` / `MakerOrder`). Found by the account's API key (never carried out) or its addresses.
 */
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { clobTradeSchema, clobTradesWirePageSchema, ownClobTrade, ownClobTradesPage } from '../clob/trades';

const YES = '11';
const NO = '12';
const ME = '0x1111111111111111111111111111111111111111';
const FUNDER = '0x3333333333333333333333333333333333333333';
const KEY = '00000000-0000-4000-8000-00000000c0de';

/**
 * A `GET /data/trades` row: a taker bought 15 "Yes" at 0.62 against two resting sells, one of them the person's (10 at
 * 0.60).
 */
const row = (o: { trader_side?: string; mineOwner?: string; mineAddress?: string } = {}) => ({
  id: 'match-1',
  taker_order_id: '0xtaker',
  market: '0xcondition',
  asset_id: YES,
  side: 'BUY',
  size: '15',
  fee_rate_bps: '0',
  price: '0.62',
  status: 'CONFIRMED',
  match_time: '1700000000',
  last_update: '1700000000',
  outcome: 'Yes',
  bucket_index: 0,
  owner: 'taker-key',
  maker_address: '0x4444444444444444444444444444444444444444',
  ...(o.trader_side ? { trader_side: o.trader_side } : {}),
  maker_orders: [
    {
      order_id: '0xtheirs',
      owner: 'someone-else',
      maker_address: '0x2222222222222222222222222222222222222222',
      matched_amount: '5',
      price: '0.62',
      fee_rate_bps: '0',
      asset_id: YES,
      outcome: 'Yes',
      side: 'SELL',
    },
    {
      order_id: '0xmine',
      owner: o.mineOwner ?? KEY,
      maker_address: o.mineAddress ?? ME,
      matched_amount: '10',
      price: '0.6',
      fee_rate_bps: '0',
      asset_id: YES,
      outcome: 'Yes',
      side: 'SELL',
    },
  ],
});
const page = (...rows: unknown[]) => v.parse(clobTradesWirePageSchema, { data: rows });

describe('ownClobTradesPage', () => {
  it(
    'as maker: the person’s maker order (by the API key), not ' +
      'the taker’s top-level figures; the key is not in the answer',
    () => {
      const [t] = ownClobTradesPage(
        page(row({ trader_side: 'MAKER', mineAddress: '0x5555555555555555555555555555555555555555' })),
        KEY,
        [ME],
      );
      expect(t).toEqual({
        id: 'match-1',
        match_time: '1700000000',
        trader_side: 'MAKER',
        own: [{ order_id: '0xmine', side: 'SELL', size: '10', price: '0.6', asset_id: YES, outcome: 'Yes' }],
      });
      expect(JSON.stringify(t)).not.toContain(KEY);
    },
  );

  it(
    'as maker through another API key of the account: found ' + 'by the funder address its order names (case aside)',
    () => {
      const [t] = ownClobTradesPage(
        page(
          row({ trader_side: 'MAKER', mineOwner: 'other-key', mineAddress: FUNDER.toUpperCase().replace('0X', '0x') }),
        ),
        KEY,
        [ME, FUNDER],
      );
      expect(t?.own).toEqual([expect.objectContaining({ order_id: '0xmine', side: 'SELL', size: '10' })]);
    },
  );

  it('as taker: the top-level figures and the taker order id', () => {
    const [t] = ownClobTradesPage(page({ ...row({ trader_side: 'TAKER' }), maker_orders: [] }), KEY, [ME]);
    expect(t).toEqual({
      id: 'match-1',
      match_time: '1700000000',
      trader_side: 'TAKER',
      own: [{ order_id: '0xtaker', side: 'BUY', size: '15', price: '0.62', asset_id: YES, outcome: 'Yes' }],
    });
  });

  it('MAKER naming none of the person’s orders: no figures at all', () => {
    const [t] = ownClobTradesPage(
      page(row({ trader_side: 'MAKER', mineOwner: 'x', mineAddress: '0x5555555555555555555555555555555555555555' })),
      KEY,
      [ME],
    );
    expect(t).toEqual({ id: 'match-1', match_time: '1700000000', trader_side: 'MAKER', own: [] });
  });

  it('no trader_side: maker when a maker order is the person’s, else taker', () => {
    expect(ownClobTradesPage(page(row()), KEY, [ME])[0]?.trader_side).toBe('MAKER');
    expect(
      ownClobTradesPage(page(row({ mineOwner: 'x', mineAddress: '0x5555555555555555555555555555555555555555' })), KEY, [
        ME,
      ])[0]?.trader_side,
    ).toBe('TAKER');
  });
});

describe('ownClobTrade', () => {
  it(
    'every maker order of the person in one match, each with its own side, ' +
      'price and token (a buy of “No” the exchange matched with a buy of “Yes”)',
    () => {
      const t = ownClobTrade(
        {
          id: 'm',
          match_time: '1',
          trader_side: 'MAKER',
          side: 'BUY',
          size: '20',
          price: '0.62',
          asset_id: YES,
          outcome: 'Yes',
          maker_orders: [
            {
              order_id: 'a',
              byAccountKey: true,
              side: 'SELL',
              matched_amount: '10',
              price: '0.6',
              asset_id: YES,
              outcome: 'Yes',
            },
            {
              order_id: 'b',
              byAccountKey: true,
              side: 'BUY',
              matched_amount: '10',
              price: '0.38',
              asset_id: NO,
              outcome: 'No\u200B',
            },
          ],
        },
        [ME],
      );
      expect(t.own).toEqual([
        { order_id: 'a', side: 'SELL', size: '10', price: '0.6', asset_id: YES, outcome: 'Yes' },
        { order_id: 'b', side: 'BUY', size: '10', price: '0.38', asset_id: NO, outcome: '' },
      ]);
      // What the contract carries is the same after validation (the popup validates every push again).
      expect(v.parse(clobTradeSchema, t)).toEqual(t);
    },
  );
});
