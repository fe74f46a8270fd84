/**
 * Popup procedures that read the gateways without a key (books, catalogue, data service, trades):
 * every answer is validated at the boundary and reduced to the fields the popup shows (the answers'
 * schemas are the contract's, lib/messaging/reads.ts). Contract: lib/messaging/reads.ts.
 */
import * as v from 'valibot';
import { requestJson } from '../../http/json';
import { BaseError } from '../../errors/base';
import { readSettings } from '../../settings';
import { dataPositionSchema, type READ_CONTRACT } from '../../messaging/reads';
import { clobTradeSchema } from '../../clob/trades';
import { beaconDepositWallet, uupsDepositWallet } from '../../relayer/wallet';
import type { ContractHandlers, ProcedureDeps } from './deps';
import { clobBookSchema } from '../../clob/wire';
import { shortToken, venueText } from '../../validation/venue-text';
import { venueDecimalString as decimal } from '../../validation';

/** `GET /fee-rate?token_id=`: the base fee in basis points. */
const clobFeeRateSchema = v.object({ base_fee: v.pipe(v.number(), v.finite(), v.minValue(0)) });
/** `GET /data/trades` page (only the rows are read). */
const clobTradesPageSchema = v.object({ data: v.array(clobTradeSchema) });
/** `GET /v2/positions` (PROTOCOL.md §3.4). */
const dataPositionsSchema = v.object({
  data: v.array(dataPositionSchema),
  pagination: v.object({ next_cursor: v.nullable(v.pipe(v.string(), v.maxLength(200))) }),
});
/** `GET /v2/value?user=`: the account's total value (a decimal string or a number). */
const dataValueSchema = v.object({ data: v.object({ value: v.union([v.string(), v.number()]) }) });
/** `GET /markets/keyset` (PROTOCOL.md §3.3): a page of markets (each checked on its own) and the next cursor. */
const keysetSchema = v.looseObject({ markets: v.array(v.unknown()), next_cursor: v.optional(v.unknown()) });
/** One catalogue market; `clobTokenIds` and `outcomes` are JSON-encoded lists (arrays are accepted too). */
const rawMarketSchema = v.looseObject({
  question: v.optional(v.unknown()),
  slug: v.optional(v.unknown()),
  clobTokenIds: v.unknown(),
  outcomes: v.unknown(),
  negRisk: v.optional(v.unknown()),
});
const tokenIdsSchema = v.array(v.pipe(v.string(), v.regex(/^\d{1,78}$/)));
const outcomesSchema = v.array(v.unknown());

/** A catalogue list field: the array itself, or the array a JSON string encodes (throws on bad JSON). */
const listOf = (x: unknown): unknown => (Array.isArray(x) ? x : JSON.parse(String(x)));

/**
 * A catalogue market as the popup lists it, or none when its token ids or outcomes are not lists of the right shape.
 */
function catalogueMarket(raw: unknown) {
  const m = v.safeParse(rawMarketSchema, raw);
  if (!m.success) return [];
  try {
    const tokenIds = v.safeParse(tokenIdsSchema, listOf(m.output.clobTokenIds));
    const outcomes = v.safeParse(outcomesSchema, listOf(m.output.outcomes));
    if (!tokenIds.success || !outcomes.success) return [];
    const { question, slug, negRisk } = m.output;
    // The catalogue's words, validated at the boundary (venue-text); a refused one is named by the token it stands for.
    const first = tokenIds.output[0] ?? '';
    const name = venueText(question, { max: 200 }) ?? `market of token ${shortToken(first)}`;
    return [
      {
        question: name,
        slug: String(slug ?? '').slice(0, 100),
        tokenIds: tokenIds.output,
        outcomes: outcomes.output.map((o, i) => venueText(o, { max: 40 }) ?? `outcome ${i + 1}`),
        negRisk: negRisk === true,
      },
    ];
  } catch {
    return [];
  }
}

/** Handlers of `perps.book`, `catalogue.markets`, `clob.book`, `clob.trades` and `data.portfolio`. */
export function gatewayReads(
  d: Pick<ProcedureDeps, 'db' | 'reads' | 'vault' | 'service'>,
): ContractHandlers<typeof READ_CONTRACT> {
  const { db, reads, vault } = d;
  /**
   * Whose positions the data service is asked for: `account`'s deposit wallet when it has one whose
   * stored address is still its derivation (PROTOCOL.md §4.2; a type-3 account's shares are the
   * wallet's), else `account`.
   */
  const holder = async (account: string, chainId: number): Promise<string> => {
    const w = await vault.depositWallet(account);
    if (!w) return account;
    const derived =
      w.kind === 'uups' ? uupsDepositWallet(w.account, chainId) : beaconDepositWallet(w.account, chainId, w.beacon);
    return derived.toLowerCase() === w.wallet.toLowerCase() ? w.wallet : account;
  };
  return {
    'perps.book': async ({ iid }) => reads.perpsBook(iid),
    'catalogue.markets': async ({ q, cursor }) => {
      const { gammaUrl } = await readSettings(db);
      const qs = new URLSearchParams({ limit: '10', closed: 'false' });
      if (q) qs.set('q', q);
      if (cursor) qs.set('after_cursor', cursor);
      const res = await requestJson(`${gammaUrl}/markets/keyset?${qs}`, { method: 'GET' }, d.service.gatewayFetch());
      const body = v.safeParse(keysetSchema, res.body);
      if (res.status !== 200 || !body.success) throw new BaseError('The catalogue did not answer.');
      const next = body.output.next_cursor;
      return {
        markets: body.output.markets.flatMap(catalogueMarket),
        next_cursor: typeof next === 'string' ? next : null,
      };
    },
    'clob.book': async ({ tokenId }) => {
      const { clobUrl } = await readSettings(db);
      const [res, fee] = await Promise.all([
        requestJson(`${clobUrl}/book?token_id=${tokenId}`, { method: 'GET' }, d.service.gatewayFetch()),
        requestJson(`${clobUrl}/fee-rate?token_id=${tokenId}`, { method: 'GET' }, d.service.gatewayFetch()).catch(
          () => undefined,
        ),
      ]);
      const b = v.safeParse(clobBookSchema, res.body);
      if (res.status !== 200 || !b.success) throw new BaseError('The exchange has no order book for this token.');
      // The venue lists bids ascending and asks descending (best last): best first here, 10 levels.
      const best = (xs: { price: string; size: string }[]) =>
        xs
          .slice(-10)
          .reverse()
          .map((l): [string, string] => [l.price, l.size]);
      const feeRate = v.safeParse(clobFeeRateSchema, fee?.body);
      return {
        tickSize: String(b.output.tick_size),
        minSize: b.output.min_order_size,
        negRisk: b.output.neg_risk,
        bestBid: b.output.bids.at(-1)?.price ?? null,
        bestAsk: b.output.asks.at(-1)?.price ?? null,
        bids: best(b.output.bids),
        asks: best(b.output.asks),
        feeRateBps: feeRate.success ? feeRate.output.base_fee : 0,
      };
    },
    'clob.trades': async ({ account }) => {
      const rows = v.safeParse(clobTradesPageSchema, await reads.clobTrades(account));
      if (!rows.success) throw new BaseError('The exchange answered trades in an unexpected shape.');
      return rows.output.data.slice(0, 50);
    },
    'data.portfolio': async ({ account, cursor }) => {
      const { dataUrl, clobChainId } = await readSettings(db);
      const user = await holder(account, clobChainId);
      const qs = new URLSearchParams({ user, limit: '20', ...(cursor ? { cursor } : {}) });
      const [pos, val] = await Promise.all([
        requestJson(`${dataUrl}/v2/positions?${qs}`, { method: 'GET' }, d.service.gatewayFetch()),
        requestJson(`${dataUrl}/v2/value?user=${user}`, { method: 'GET' }, d.service.gatewayFetch()),
      ]);
      const p = v.safeParse(dataPositionsSchema, pos.body);
      if (pos.status !== 200 || !p.success) throw new BaseError('The data service did not answer positions.');
      const value = v.safeParse(dataValueSchema, val.body);
      return {
        positions: p.output.data,
        value: value.success ? String(value.output.data.value) : null,
        next_cursor: p.output.pagination.next_cursor,
      };
    },
  };
}
