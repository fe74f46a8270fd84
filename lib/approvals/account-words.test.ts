/**
 * What a person reads in the popup is what is signed, against a gateway that lies in its account reads
 * (positions, open orders) and its steps: the real background on the fake browser talks to a gateway hop
 * (`startLyingGateway`) in front of the sandbox; the popup's own stores read through the background (so
 * through the hop) and its components render what a person reads. Each test compares that text with what
 * reached the venue (the sandbox's request log). The popup signs on the person's click (no window), so
 * its words are the consent.
 */
import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import type { VNode } from 'preact';
import type { Harness } from '../../test/kits/sandbox';
import { patchInstruments, startLyingGateway, type LyingGateway } from '../../test/kits/sandbox';
import { callAs, lyingGatewaySuite, pageSender, until, type PagedBackground } from '../../test/kits/background';
import { popupCall, renderedText } from '../../test/kits/approvals';
import { createPerpsStore, labelOf, lotOf, tickOf } from '../../entrypoints/popup/stores/perps';
import { createPositionsStore } from '../../entrypoints/popup/stores/positions';
import { ClosePreview } from '../../components/RiskPanel';
import { OpenOrders } from '../../components/perps/OpenOrders';
import { BookLadder } from '../../components/BookLadder';
import { groupDecimal } from '../format';
import { parsePerpsEvent } from '../streams/perps-frames';
import { createNotificationRules } from '../notifications/rules';
import { DEFAULT_NOTIFICATION_PREFS } from '../notifications/prefs';
import { WebSocket as NodeWebSocket } from 'ws';
import { createPerpsStream } from '../streams/perps';
import type { PerpsStreamEvent } from '../streams/perps-frames';
import { createOrders } from '../perps/commands';

const SITE = 'https://trade.example';
const page = pageSender(SITE, 3);

let h: Harness;
let hop: LyingGateway;
const { kit, onHop } = lyingGatewaySuite({
  site: SITE,
  page,
  dbPrefix: 'popup-words',
  onStart: (x) => (h = x),
  onGateway: (x) => (hop = x),
});

/** Every text a vnode tree renders, runs of white space as one space: what a person reads. */
const textOf = (n: unknown): string => renderedText(n).replace(/\s+/g, ' ');

/**
 * The perps commands the popup sent since `from` (the sandbox's request log, whatever the venue answered): each signed
 * order.
 */
function sentOrders(
  from: number,
): { iid: number; buy: boolean; qty: string; p?: string; tif?: string; ro?: boolean }[] {
  return h.ctx.requestLog
    .slice(from)
    .filter((r) => r.method === 'POST' && r.path === '/perps/v1/trade/orders' && r.body)
    .flatMap((r) => (JSON.parse(r.body!) as { op: { args: never[] } }).op.args);
}

/**
 * The popup's perps store for the demo owner over `bg`, with the instruments, portfolio, open orders and fees read
 * (through the hop).
 */
async function popupStore(bg: PagedBackground) {
  const account = h.demo.owner.address;
  const perps = createPerpsStore(account, popupCall(bg), () => () => undefined, account);
  perps.instruments.value = await perps.read('instruments');
  perps.portfolio.value = await perps.read('portfolio');
  perps.openOrders.value = await perps.read('openOrders');
  const f = (await perps.read('fees')).fee_schedule[0]!;
  perps.fees.value = { taker: f.taker_fee_rate, maker: f.maker_fee_rate };
  return { perps, account };
}

/** Opens a BTC long of 0.01 through the popup's own send (an IOC through the mark). */
async function openBtcLong(bg: PagedBackground): Promise<void> {
  const { op } = await kit.iocBtc(`${Date.now().toString(16)}`.padStart(32, 'c'));
  const r = (await callAs(bg, 'perps.send', { account: h.demo.owner.address, op })) as { ok: boolean };
  expect(r.ok).toBe(true);
}

describe('closing a position', () => {
  it(
    'a position read that names another instrument and the opposite side: the ' +
      'close preview says the side, size and instrument id the close order signs',
    async () => {
      const bg = await onHop();
      await openBtcLong(bg);
      // The gateway reports the BTC long (instrument 1) as a short on instrument 2, still named BTC-PERP.
      hop.lies.rewrite = (a) => {
        if (a.path !== '/perps/v1/account/portfolio') return undefined;
        const b = a.body as { positions: { instrument_id: number; size: string }[] };
        return {
          ...b,
          positions: b.positions.map((p) =>
            p.instrument_id === 1
              ? { ...p, instrument_id: 2, symbol: 'BTC-PERP', size: `-${p.size.replace('-', '')}` }
              : p,
          ),
        };
      };
      const { perps } = await popupStore(bg);
      const p = perps.portfolio.value!.positions.find((x) => x.instrument_id === 2)!;
      expect(p).toBeDefined();
      const inst = perps.instruments.value.find((i) => i.instrument_id === p.instrument_id)!;
      const s = createPositionsStore(perps, (cmd) =>
        popupCall(bg)('perps.send', { account: h.demo.owner.address, op: cmd.body } as never),
      );
      await s.close(p);
      const c = s.closing.value!;
      expect(c, s.error.value).toBeDefined();
      // What the popup renders (positions.tsx): the preview with the instrument's steps.
      const text = textOf(
        ClosePreview({
          symbol: c.label,
          tick: tickOf(inst),
          lot: lotOf(inst),
          preview: c.preview,
          onConfirm: () => undefined,
          onCancel: () => undefined,
        }),
      );
      const from = h.ctx.requestLog.length;
      await s.confirmClose();
      const [sent] = sentOrders(from);
      expect(sent).toMatchObject({ iid: 2, buy: true, ro: true, tif: 'ioc' });
      expect(text).toContain(`Buy ${sent!.qty} `);
      expect(text).toContain('(#2)');
      for (const m of text.matchAll(/[A-Z]{2,5}-PERP/g))
        expect(text.slice(m.index, m.index + m[0].length + 5)).toBe(`${m[0]} (#2)`);
      hop.lies.rewrite = undefined;
    },
    30_000,
  );

  it(
    'a portfolio frame the stream pushes carries a position by the id it stands for, ' +
      'whatever symbol it carries (the popup names it through the instruments read)',
    () => {
      const position = {
        instrument_id: 2,
        symbol: 'BTC-PERP',
        size: '-0.01',
        entry_price: '3000',
        leverage: 5,
        cross: true,
        initial_margin: '6',
        maintenance_margin: '0.3',
        position_value: '30',
        liquidation_price: '0',
        unrealized_pnl: '0',
        return_on_equity: '0',
        cumulative_funding: '0',
      };
      const frame = {
        ch: 'portfolio',
        ts: 1,
        sq: 1,
        data: {
          positions: [position],
          margin: {
            total_account_value: '100',
            total_initial_margin: '6',
            total_maintenance_margin: '0.3',
            total_position_value: '30',
          },
          withdrawable: '94',
        },
      };
      const parsed = parsePerpsEvent(frame);
      expect(parsed?.event).toMatchObject({ kind: 'portfolio' });
      const [p] = (parsed!.event as { portfolio: { positions: { instrument_id: number }[] } }).portfolio.positions;
      expect(p).not.toHaveProperty('symbol');
      expect(p!.instrument_id).toBe(2);
    },
  );
});

/**
 * A portfolio frame (PROTOCOL.md §5.1) holding one position on `iid` of `size` (a long worth 65 000 a unit, liquidation
 * at 60 000).
 */
function portfolioFrame(iid: number, size: string, symbol = 'BTC-PERP') {
  const value = (Math.abs(Number(size)) * 65_000).toString();
  const position = {
    instrument_id: iid,
    symbol,
    size,
    entry_price: '65000',
    leverage: 10,
    cross: true,
    initial_margin: '1',
    maintenance_margin: '1',
    position_value: value,
    liquidation_price: '60000',
    unrealized_pnl: '0',
    return_on_equity: '0',
    cumulative_funding: '0',
  };
  return {
    ch: 'portfolio',
    ts: 1,
    sq: 1,
    data: {
      positions: [position],
      margin: {
        total_account_value: '100',
        total_initial_margin: '1',
        total_maintenance_margin: '1',
        total_position_value: value,
      },
      withdrawable: '99',
    },
  };
}

describe('positions the stream pushes', () => {
  it(
    'a near-liquidation notification states the position size ' +
      'the stream reports as it is: no exponent, no digit lost',
    () => {
      for (const size of ['0.00000012', '12345678.123456789012']) {
        const parsed = parsePerpsEvent(portfolioFrame(1, size));
        expect(parsed?.event).toMatchObject({ kind: 'portfolio' });
        const rules = createNotificationRules((iid) => (iid === 1 ? { symbol: 'BTC-PERP', tick: '0.5' } : undefined));
        const [n] = rules.onPush({ account: '0xabc', push: parsed!.event } as never, DEFAULT_NOTIFICATION_PREFS, 0);
        expect(n?.title).toBe('Position near liquidation');
        expect(n!.message).toContain(`Long ${groupDecimal(size)} BTC-PERP (#1):`);
      }
    },
  );

  it(
    'a lying stream (the hop rewriting portfolio frames) cannot name a position ' +
      'by another instrument or push a size out of the decimal shape: what ' +
      'the stream client hands on names each position beside the id it carries',
    async () => {
      // The gateway's stream reports the BTC position (instrument 1) on instrument 2, still named BTC-PERP; every other
      // frame's sizes with an exponent.
      let lied = 0;
      hop.lies.rewriteFrame = (f) => {
        const frame = f as { ch?: string; data?: { positions?: Record<string, unknown>[] } };
        if (frame.ch !== 'portfolio' || !frame.data?.positions?.length) return undefined;
        lied += 1;
        const exponent = lied % 2 === 0;
        return {
          ...frame,
          data: {
            ...frame.data,
            positions: frame.data.positions.map((p) =>
              p.instrument_id === 1
                ? { ...p, instrument_id: 2, symbol: 'BTC-PERP', ...(exponent ? { size: '1e-2' } : {}) }
                : p,
            ),
          },
        };
      };
      const events: PerpsStreamEvent[] = [];
      const s = createPerpsStream({
        wsUrl: `${hop.url.replace('http', 'ws')}/perps/v1/ws`,
        ...h.proxyAuth,
        WebSocket: NodeWebSocket as never,
        onEvent: (e) => events.push(e),
        onResync: () => undefined,
        onStatus: () => undefined,
        random: () => 0.5,
        timing: { baseDelayMs: 100 },
      });
      s.start();
      try {
        await until(() => s.status().state === 'live');
        for (let i = 0; i < 3 && lied < 2; i++) {
          await h.send(
            h.proxy,
            createOrders({
              orders: [
                {
                  iid: 1,
                  buy: true,
                  p: String(Math.round(Number(await kit.mark(1)) * 1.01)),
                  qty: '0.002',
                  tif: 'ioc',
                },
              ],
            }),
          );
          await until(() => lied >= i + 1).catch(() => undefined);
        }
        expect(lied).toBeGreaterThan(0);
        const positions = events.flatMap((e) => (e.kind === 'portfolio' ? e.portfolio.positions : []));
        expect(positions.length).toBeGreaterThan(0);
        for (const p of positions) {
          expect(
            p,
            'a position carries no name of its own: the popup names it by its id through the instruments read',
          ).not.toHaveProperty('symbol');
          expect(p.size).toMatch(/^-?\d+(\.\d+)?$/);
        }
      } finally {
        s.stop();
        hop.lies.rewriteFrame = undefined;
      }
    },
    30_000,
  );

  it(
    'a position size or entry price out of the decimal shape (exponent, sign ' +
      'twice, spaces, hex) is refused at the boundary: the frame is dropped',
    () => {
      for (const size of ['1e3', '--0.5', ' 0.5', '0x10', '0.5-', ''])
        expect(parsePerpsEvent(portfolioFrame(1, size)), size).toBeUndefined();
      const f = portfolioFrame(1, '0.5');
      (f.data.positions[0] as { entry_price: string }).entry_price = '6.5e4';
      expect(parsePerpsEvent(f)).toBeUndefined();
    },
  );
});

describe('open orders', () => {
  it(
    "the open-orders list shows an order's size and price as the venue holds them whatever " +
      'tick and lot the gateway reports (padded, never rounded), beside the id a cancel signs',
    async () => {
      const bg = await onHop();
      const coid = `${Date.now().toString(16)}`.padStart(32, 'd');
      const { op } = await kit.restingBtc(coid);
      const from = h.ctx.requestLog.length;
      const r = (await callAs(bg, 'perps.send', { account: h.demo.owner.address, op })) as {
        ok: boolean;
        result: unknown;
      };
      expect(r.ok).toBe(true);
      const [placed] = sentOrders(from);
      hop.lies.rewrite = (a) =>
        a.path === '/perps/v1/info/instruments'
          ? patchInstruments(a.body, (i) =>
              i.instrument_id === 1
                ? { tick_size: '100', lot_size: '1', price_decimals: 0, quantity_decimals: 0 }
                : undefined,
            )
          : undefined;
      const { perps } = await popupStore(bg);
      const order = perps.openOrders.value.find((o) => o.client_order_id === coid)!;
      expect(order).toBeDefined();
      const step = (iid: number) => {
        const i = perps.instruments.value.find((x) => x.instrument_id === iid)!;
        return { tick: tickOf(i), lot: lotOf(i) };
      };
      const cancelled: number[] = [];
      const text = textOf(
        OpenOrders({
          orders: [order],
          label: (id) => labelOf(perps.instruments.value, id),
          steps: step,
          onCancel: (oid) => cancelled.push(oid),
          onCancelByCoid: () => undefined,
          onCancelAll: () => undefined,
        }),
      );
      expect(text).toContain(`Buy ${placed!.qty} `);
      expect(text).toContain(`at ${groupDecimal(placed!.p!)}`);
      expect(text).toContain(`#${order.order_id}`);
      await callAs(bg, 'perps.send', {
        account: h.demo.owner.address,
        op: { type: 'cancelOrders', args: [order.order_id] },
      });
      hop.lies.rewrite = undefined;
    },
    30_000,
  );
});

/** The `<tr>` rows with a click handler a vnode tree renders (function components called). */
function clickableRows(
  n: unknown,
  out: VNode<{ onClick?: () => void; children?: unknown }>[] = [],
): VNode<{ onClick?: () => void; children?: unknown }>[] {
  if (Array.isArray(n)) for (const c of n) clickableRows(c, out);
  else if (n && typeof n === 'object' && 'type' in n) {
    const v = n as VNode<{ onClick?: () => void; children?: unknown }>;
    if (typeof v.type === 'function') return clickableRows((v.type as (p: unknown) => unknown)(v.props), out);
    if (v.type === 'tr' && v.props.onClick) out.push(v);
    clickableRows(v.props?.children, out);
  }
  return out;
}

describe('the book ladder', () => {
  it(
    'each level reads the price a click puts in the ticket and the ' +
      'size the venue quotes, whatever tick and lot the gateway reports',
    async () => {
      const bg = await onHop();
      hop.lies.rewrite = (a) =>
        a.path === '/perps/v1/info/instruments'
          ? patchInstruments(a.body, (i) =>
              i.instrument_id === 1
                ? { tick_size: '100', lot_size: '1', price_decimals: 0, quantity_decimals: 0 }
                : undefined,
            )
          : undefined;
      const { perps } = await popupStore(bg);
      const inst = perps.instruments.value.find((i) => i.instrument_id === 1)!;
      const book = await perps.read('book', { instrument_id: 1, depth: 10 });
      expect(book.bids.length + book.asks.length).toBeGreaterThan(0);
      let picked = '';
      const rows = clickableRows(
        BookLadder({
          bids: book.bids,
          asks: book.asks,
          tick: tickOf(inst),
          lot: lotOf(inst),
          unit: 'BTC',
          onPick: (p) => (picked = p),
        }),
      );
      const levels = [...book.asks.slice(0, 6).reverse(), ...book.bids.slice(0, 6)];
      expect(rows).toHaveLength(levels.length);
      rows.forEach((row, i) => {
        const [price, size] = textOf(row).trim().split(' ');
        row.props.onClick!();
        expect(price, 'the price a row reads is the price its click takes').toBe(groupDecimal(picked));
        expect(size).toBe(groupDecimal(levels[i]![1]));
      });
      hop.lies.rewrite = undefined;
    },
    30_000,
  );
});
