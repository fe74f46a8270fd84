/**
 * What a person reads is what is signed, against a gateway that lies in its public reads: the real
 * background on the fake browser talks to a gateway hop (`startLyingGateway`, `test/kits/sandbox.ts`) in front of
 * the in-process sandbox. The hop rewrites names, ticks, lots, prices and error texts; the signing path stays honest.
 * Each test compares what the person reads (the approval window's words and numbers, the audit entry, the page's error)
 * with what reached the venue (the sandbox's request log).
 */
import 'fake-indexeddb/auto';
import { afterEach, describe, expect, it } from 'vitest';
import type { Harness } from '../../test/kits/sandbox';
import { patchInstruments, startLyingGateway, type LyingGateway } from '../../test/kits/sandbox';
import {
  btcOnly,
  callAs,
  lyingGatewaySuite,
  pageSender,
  until,
  waitPending,
  type PagedBackground,
} from '../../test/kits/background';
import { popupCall, renderedText } from '../../test/kits/approvals';
import { createApprovalStore } from '../../entrypoints/popup/stores/approvals';
import { ApprovalView, type ApprovalViewData } from '../../components/ApprovalView';
import { ClosePreview, RiskPanel } from '../../components/RiskPanel';
import { OpenOrders } from '../../components/perps/OpenOrders';
import { createPerpsStore } from '../../entrypoints/popup/stores/perps';
import { createPositionsStore } from '../../entrypoints/popup/stores/positions';
import { groupDecimal } from '../format';
import { createBackgroundNotifications } from '../background/notifications';
import { parsePerpsAnswer } from '../perps/wire';

const SITE = 'https://trade.example';
const page = pageSender(SITE, 3);
const BIDI = /[\u061C\u200B-\u200F\u202A-\u202E\u2066-\u2069\uFEFF]/;

let h: Harness;
let hop: LyingGateway;
const { kit, onHop } = lyingGatewaySuite({
  site: SITE,
  page,
  dbPrefix: 'gateway-words',
  onStart: (x) => (h = x),
  onGateway: (x) => (hop = x),
});

/** The perps orders that reached the venue since `from` (the sandbox's request log): each signed `op`. */
function sentOps(from: number): { iid: number; buy: boolean; qty: string; p?: string; tr?: { trp: string } }[] {
  return h.ctx.requestLog
    .slice(from)
    .filter((r) => r.method === 'POST' && r.path === '/perps/v1/trade/orders' && r.status === 200 && r.body)
    .flatMap((r) => (JSON.parse(r.body!) as { op: { args: never[] } }).op.args);
}

/**
 * What the approval window shows for the request at the head of the queue: its store (the window's own,
 * `createApprovalStore`, reading the venue through the background — so through the hop) loads the queue
 * and the order numbers, and `ApprovalView` renders them. Returns the text a person reads.
 */
async function windowText(bg: PagedBackground): Promise<string> {
  const store = createApprovalStore({
    call: popupCall(bg),
    onEmpty: () => undefined,
    focus: { has: () => false, listen: () => () => undefined },
  });
  await store.load();
  const head = store.head.value;
  if (!head) throw new Error('no window');
  await store.summarize(head.id, head.digest);
  const data = store.head.value as ApprovalViewData;
  return renderedText(
    ApprovalView({
      view: data,
      armed: true,
      queueLength: 1,
      now: Date.now(),
      onApprove: () => undefined,
      onReject: () => undefined,
    }),
  );
}

/**
 * Waits for the window, reads it as the approval window renders it, approves it; returns the text read and the request.
 */
async function readAndApprove(
  bg: PagedBackground,
): Promise<{ text: string; view: Awaited<ReturnType<typeof waitPending>>[number] }> {
  const [view] = await waitPending(bg);
  if (!view) throw new Error('no window');
  const text = await windowText(bg);
  bg.registry.decide(view.id, { approve: true, digest: view.digest });
  return { text, view };
}

/** The newest audit entry's summary. */
async function lastAudit(bg: PagedBackground): Promise<string> {
  const r = (await callAs(bg, 'audit.list', { limit: 5 })) as { result: { summary: string; kind: string }[] };
  return r.result[0]?.summary ?? '';
}

describe('instrument names a gateway serves', () => {
  it(
    'an instrument name a gateway serves with bidi characters is refused: the ' +
      'window and the audit entry name the instrument by the id the venue received',
    async () => {
      const bg = await onHop();
      hop.lies.rewrite = (a) =>
        a.path === '/perps/v1/info/instruments'
          ? patchInstruments(a.body, (i) => (i.instrument_id === 1 ? { symbol: 'ETH-PERP\u202E\u2066' } : undefined))
          : undefined;
      const from = h.ctx.requestLog.length;
      const order = bg.page(page).request('perps_sendCommand', await kit.btcOrder());
      const { text } = await readAndApprove(bg);
      await order;
      const [sent] = sentOps(from);
      expect(sent?.iid).toBe(1);
      expect(text).not.toMatch(BIDI);
      expect(text).not.toContain('ETH-PERP');
      expect(text).toContain('instrument #1');
      const audit = await lastAudit(bg);
      expect(audit).not.toMatch(BIDI);
      expect(audit).toContain('instrument #1');
      hop.lies.rewrite = undefined;
    },
    30_000,
  );

  it(
    'names a gateway swaps between instruments are shown only beside the ' +
      'instrument id the signature commits to, in the window and the audit entry',
    async () => {
      const bg = await onHop();
      hop.lies.rewrite = (a) =>
        a.path === '/perps/v1/info/instruments'
          ? patchInstruments(a.body, (i) =>
              i.instrument_id === 1
                ? { symbol: 'ETH-PERP' }
                : i.instrument_id === 2
                  ? { symbol: 'BTC-PERP' }
                  : undefined,
            )
          : undefined;
      const from = h.ctx.requestLog.length;
      const order = bg.page(page).request('perps_sendCommand', await kit.btcOrder());
      const { text, view } = await readAndApprove(bg);
      await order;
      const [sent] = sentOps(from);
      expect(sent?.iid).toBe(1);
      // Every place the venue's name appears, the id the signature commits to stands beside it.
      for (const line of [...view.lines, text, await lastAudit(bg)]) {
        for (const m of line.matchAll(/[A-Z]{2,5}-PERP/g))
          expect(line.slice(m.index, m.index + m[0].length + 5)).toBe(`${m[0]} (#1)`);
      }
      expect(view.lines[0]).toContain('(#1)');
      hop.lies.rewrite = undefined;
    },
    30_000,
  );
});

describe('ticks and lots a gateway reports', () => {
  it(
    'the window shows the size and price that reached the venue whatever tick and lot the ' +
      'gateway reports: padded, never rounded, and a price off the reported tick is flagged',
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
      const from = h.ctx.requestLog.length;
      const mark = await kit.mark(1);
      const price = (Math.floor(Number(mark) * 0.99) + 0.5).toFixed(1);
      const order = bg.page(page).request('perps_sendCommand', {
        op: { type: 'createOrders', args: [{ iid: 1, buy: true, qty: '0.013', p: price, tif: 'gtc', po: true }] },
      });
      const { text } = await readAndApprove(bg);
      await order;
      const [sent] = sentOps(from);
      expect(sent).toMatchObject({ qty: '0.013', p: price });
      const summary = text.slice(text.indexOf('Order '));
      expect(summary).toContain(`Buy 0.013 `);
      expect(summary).toContain(`at ${groupDecimal(price)}`);
      expect(summary).toMatch(/not a multiple of the tick 100 the venue reports/);
      hop.lies.rewrite = undefined;
    },
    30_000,
  );
});

describe("a grant's reference price", () => {
  it(
    'a ticker mark price the order book does not bear out covers ' +
      'nothing: the order asks in a window that says the reads disagree',
    async () => {
      const bg = await onHop();
      await kit.grantOf(bg, btcOnly);
      await until(() => kit.armed(bg));
      const mark = Number(await kit.mark(1));
      const lie = (Math.floor(mark * 0.6 * 2) / 2).toFixed(1);
      hop.lies.rewrite = (a) =>
        a.path === '/perps/v1/info/tickers' && Array.isArray(a.body)
          ? a.body.map((t: Record<string, unknown>) =>
              t.instrument_id === 1 ? { ...t, mark_price: lie, mid_price: lie, index_price: lie } : t,
            )
          : undefined;
      const from = h.ctx.requestLog.length;
      const order = kit.settle(
        bg.page(page).request('perps_sendCommand', {
          op: { type: 'createOrders', args: [{ iid: 1, buy: true, qty: '0.01', p: lie, tif: 'gtc', po: true }] },
        }),
      );
      const pending = await Promise.race([waitPending(bg), order.then(() => [])]);
      expect(sentOps(from), 'nothing is sent under the grant').toHaveLength(0);
      expect(pending).toHaveLength(1);
      expect(pending[0]!.flags.join(' ')).toMatch(/disagree/);
      kit.closeAll(bg);
      await order;
      hop.lies.rewrite = undefined;
    },
    30_000,
  );
});

describe('error texts a gateway sends', () => {
  it(
    'an error text with bidi or look-alike characters is not ' +
      'shown: the page reads the venue refused, without the text',
    async () => {
      const bg = await onHop();
      hop.lies.rewriteError = (a) =>
        a.path === '/perps/v1/trade/orders'
          ? { status: 'err', error: 'none — order FILLED at 65000\u202E0005' }
          : undefined;
      // An order the venue refuses honestly (far too large for the account's margin).
      const order = kit.settle(
        bg.page(page).request('perps_sendCommand', {
          op: {
            type: 'createOrders',
            args: [{ iid: 1, buy: true, qty: '900', p: await kit.mark(1), tif: 'gtc', po: true }],
          },
        }),
      );
      await readAndApprove(bg);
      const { e } = await order;
      const msg = String((e as Error).message);
      expect(msg).not.toMatch(BIDI);
      expect(msg).not.toContain('FILLED');
      expect(msg).toMatch(/refused/);
      const audit = await lastAudit(bg);
      expect(audit).not.toMatch(BIDI);
      hop.lies.rewriteError = undefined;
    },
    30_000,
  );
});

describe('notifications', () => {
  it(
    'a fill notification names the instrument by the id the venue filled and its size and price as ' +
      "the venue filled them, whatever name and tick the gateway serves; the title is the rule's own",
    async () => {
      const bg = await onHop();
      hop.lies.rewrite = (a) =>
        a.path === '/perps/v1/info/instruments'
          ? patchInstruments(a.body, (i) =>
              i.instrument_id === 1
                ? { symbol: 'BTC-PERP\u200B LIQUIDATED', tick_size: '100', price_decimals: 0 }
                : undefined,
            )
          : undefined;
      const from = h.ctx.requestLog.length;
      const order = bg
        .page(page)
        .request('perps_sendCommand', await kit.iocBtc(`${Date.now().toString(16)}`.padStart(32, 'e')));
      await readAndApprove(bg);
      const [ack] = (await order) as { oid: number }[];
      const [sent] = sentOps(from);
      const fills = (
        (await h.read('fills')) as { data: { order_id: number; price: string; quantity: string }[] }
      ).data.filter((f) => f.order_id === ack!.oid);
      expect(fills.length).toBeGreaterThan(0);
      const raised: { title: string; message: string }[] = [];
      const n = createBackgroundNotifications({
        browser: { runtime: { getURL: (p) => p }, notifications: { create: async (_id, o) => void raised.push(o) } },
        db: bg.db(),
        vault: bg.vault(),
        grants: bg.grants(),
        service: bg.service(),
        reads: bg.reads(),
      });
      n.onPush({
        account: h.demo.owner.address,
        push: { kind: 'fills', fills: parsePerpsAnswer('fills', { data: fills }).data },
      } as never);
      await until(() => raised.length > 0);
      n.stop();
      const [notice] = raised;
      expect(notice!.title).toBe('Order filled');
      expect(notice!.message).not.toMatch(BIDI);
      expect(notice!.message).not.toContain('LIQUIDATED');
      expect(notice!.message).toContain(`Buy ${sent!.qty} instrument #1 at an average `);
      if (fills.length === 1) expect(notice!.message).toContain(`at an average ${groupDecimal(fills[0]!.price)}`);
      hop.lies.rewrite = undefined;
    },
    30_000,
  );
});

describe('order-book orders', () => {
  it(
    'a coarser tick the gateway reports rounds the price before the window: the window shows the ' +
      'signed price, flags the price asked, and its line and numbers agree with what reached the exchange',
    async () => {
      const bg = await onHop();
      const token = h.ctx.clob.markets[0]!.tokenIds[0]!;
      hop.lies.rewrite = (a) => {
        if (a.path === '/clob/tick-size') return { minimum_tick_size: 0.1 };
        if (a.path === '/clob/book') return { ...(a.body as object), tick_size: '0.1' };
        if (a.path === '/clob/fee-rate') return { base_fee: 0 };
        return undefined;
      };
      const from = h.ctx.requestLog.length;
      const order = kit.settle(
        bg.page(page).request('clob_postOrders', {
          orders: [{ tokenId: token, side: 'BUY', price: '0.42', size: '10', orderType: 'GTC' }],
        }),
      );
      const { text, view } = await readAndApprove(bg);
      await order;
      const posted = h.ctx.requestLog.slice(from).find((r) => r.method === 'POST' && r.path === '/clob/order');
      const body = JSON.parse(posted!.body!) as { order: { makerAmount: string; takerAmount: string; side: string } };
      // What reached the exchange: 10 shares for 4 USDC (0.40 a share, the price rounded to the gateway's tick).
      expect(body.order).toMatchObject({ side: 'BUY', makerAmount: '4000000', takerAmount: '10000000' });
      expect(view!.lines[0]).toContain('Buy 10.00 shares');
      expect(view!.lines[0]).toContain('at 0.40 (pay 4.00 USDC)');
      expect(text).toContain(`Order ${view!.lines[0]}`); // the Order row words it as the line
      expect(view!.flags.join(' ')).toMatch(/price asked, 0\.42, is signed as 0\.40 at the tick 0\.1/);
      hop.lies.rewrite = undefined;
    },
    30_000,
  );
});

describe('order-book orders under a grant', () => {
  afterEach(() => {
    hop.lies.rewrite = undefined;
  });

  /** A grant for `token` with a 20 % band, armed; the price asked: two decimals under the midpoint, off a 0.1 step. */
  async function grantedBuy(bg: PagedBackground, token: string): Promise<string> {
    await bg.grants().create({
      origin: SITE,
      account: kit.owner(),
      limits: {
        venue: 'clob',
        markets: [token],
        allow: { order: true },
        maxNotional: '100',
        dailyNotional: '1000',
        priceBandPct: '20',
      } as never,
      durationMs: 3_600_000,
    });
    await until(() => kit.armed(bg, 'clob'));
    const mid = Number(await bg.reads().clobMid(token));
    let cents = Math.floor(mid * 100);
    if (cents % 10 === 0) cents -= 1;
    return (cents / 100).toFixed(2);
  }

  const coarseTick = (tick: string) => (a: { path: string; body: unknown }) => {
    if (a.path === '/clob/tick-size') return { minimum_tick_size: Number(tick) };
    if (a.path === '/clob/book') return { ...(a.body as object), tick_size: tick };
    return undefined;
  };

  it.each(['GTC', 'FOK'])(
    'a %s price the tick a gateway reports would move is not covered by a grant: nothing reaches ' +
      'the exchange, the order asks in a window that names the price asked beside the price signed',
    async (orderType) => {
      const bg = await onHop();
      const token = h.ctx.clob.markets[0]!.tokenIds[0]!;
      const price = await grantedBuy(bg, token);
      hop.lies.rewrite = coarseTick('0.1');
      const from = h.ctx.requestLog.length;
      const order = kit.settle(
        bg
          .page(page)
          .request('clob_postOrders', { orders: [{ tokenId: token, side: 'BUY', price, size: '10', orderType }] }),
      );
      const pending = await Promise.race([waitPending(bg), order.then(() => [])]);
      const posted = h.ctx.requestLog
        .slice(from)
        .filter((r) => r.method === 'POST' && /^\/clob\/orders?$/.test(r.path));
      expect(posted, 'nothing is posted under the grant').toHaveLength(0);
      expect(pending).toHaveLength(1);
      expect(pending[0]!.flags.join(' ')).toMatch(
        new RegExp(`price asked, ${price.replace('.', '\\.')}, is signed as 0\\.\\d0? at the tick 0\\.1`),
      );
      kit.closeAll(bg);
      await order;
      hop.lies.rewrite = undefined;
    },
    30_000,
  );

  it(
    'a price on the tick a gateway reports is still covered by the grant: ' +
      'the order reaches the exchange at the price asked, without a window',
    async () => {
      const bg = await onHop();
      const token = h.ctx.clob.markets[0]!.tokenIds[0]!;
      const price = await grantedBuy(bg, token);
      const from = h.ctx.requestLog.length;
      const out = await kit.settle(
        bg.page(page).request('clob_postOrders', {
          orders: [{ tokenId: token, side: 'BUY', price, size: '10', orderType: 'GTC' }],
        }),
      );
      expect(out.e).toBeUndefined();
      expect(bg.registry.size).toBe(0);
      const posted = h.ctx.requestLog.slice(from).find((r) => r.method === 'POST' && r.path === '/clob/order');
      const body = JSON.parse(posted!.body!) as { order: { makerAmount: string; takerAmount: string } };
      expect(body.order).toMatchObject({
        takerAmount: '10000000',
        makerAmount: String(Math.round(Number(price) * 100) * 100_000),
      });
    },
    30_000,
  );
});

describe('positions a portfolio read names', () => {
  it(
    "a portfolio read that calls a position's instrument by another name changes nothing the " +
      'popup says about it: the close preview and its outcome name the instrument the order closes',
    async () => {
      const bg = await onHop();
      // A BTC position (instrument #1): a taker buy that fills, approved in its window.
      const opened = bg
        .page(page)
        .request('perps_sendCommand', await kit.iocBtc(`${Date.now().toString(16)}`.padStart(32, 'c')));
      await readAndApprove(bg);
      await opened;
      hop.lies.rewrite = (a) => {
        if (a.path !== '/perps/v1/account/portfolio') return undefined;
        const b = a.body as { positions: Record<string, unknown>[] };
        return { ...b, positions: b.positions.map((x) => (x.instrument_id === 1 ? { ...x, symbol: 'ETH-PERP' } : x)) };
      };
      const perps = createPerpsStore(kit.owner(), popupCall(bg), () => () => undefined);
      await perps.start();
      perps.stop();
      const position = perps.portfolio.value?.positions.find((x) => x.instrument_id === 1);
      expect(position).toBeDefined();
      const positions = createPositionsStore(perps, (cmd) =>
        popupCall(bg)('perps.send', { account: kit.owner(), op: cmd.body } as never),
      );
      await positions.close(position!);
      const c = positions.closing.value;
      expect(c, positions.error.value).toBeDefined();
      const preview = renderedText(
        ClosePreview({ symbol: c!.label, preview: c!.preview, onConfirm: () => undefined, onCancel: () => undefined }),
      );
      const from = h.ctx.requestLog.length;
      await positions.confirmClose();
      const [sent] = sentOps(from);
      expect(sent?.iid).toBe(1);
      for (const said of [preview, positions.notice.value ?? '', positions.error.value ?? '']) {
        expect(said).not.toContain('ETH-PERP');
      }
      expect(preview).toContain('BTC-PERP (#1)');
      expect(positions.notice.value).toContain('BTC-PERP (#1)');
      hop.lies.rewrite = undefined;
    },
    30_000,
  );
});

describe('the ticket summary', () => {
  it(
    'the ticket shows the TP / SL triggers and the protected limit it will sign ' +
      'as signed, whatever tick and lot the gateway reports (padded, never rounded)',
    () => {
      // The steps a gateway reports in its instruments read (as the hop above serves them), and the numbers the ticket
      // signs.
      const text = renderedText(
        RiskPanel({
          symbol: 'instrument #1',
          tick: '100',
          lot: '1',
          available: '1000',
          leverage: 10,
          cross: true,
          market: { limit: '65650.5', avgPrice: '65005', slippageBps: '1', fillable: '0.013', complete: true } as never,
          slippageCapBps: 100,
          tpsl: { tp: '70000.5', sl: '60000.25' },
          warnings: [],
        }),
      );
      expect(text).toContain('at 65,650.5, immediate-or-cancel');
      expect(text).toContain('at market when the mark reaches 70,000.5, reduce-only');
      expect(text).toContain('at market when the mark reaches 60,000.25, reduce-only');
    },
  );
});

describe('the open orders list', () => {
  it(
    'shows each resting size and price as the venue reports them, whatever tick and ' +
      'lot the gateway reports (padded, never rounded), named by the instrument label',
    () => {
      const text = renderedText(
        OpenOrders({
          orders: [
            {
              order_id: 7,
              instrument_id: 1,
              buy: true,
              price: '65000.5',
              quantity: '0.013',
              resting_quantity: '0.013',
              status: 'open',
            },
          ],
          label: () => 'instrument #1',
          steps: () => ({ tick: '100', lot: '1' }),
          onCancel: () => undefined,
          onCancelByCoid: () => undefined,
          onCancelAll: () => undefined,
        }),
      );
      expect(text).toContain('0.013 instrument #1 at 65,000.5');
    },
  );
});

describe('order-book position words', () => {
  it(
    'a position title and outcome label the data service serves with bidi or look-alike ' +
      'characters are refused: the position is named by the token it holds, never left blank',
    async () => {
      const bg = await onHop();
      const token = h.ctx.clob.markets[0]!.tokenIds[0]!;
      const row = {
        token_id: token,
        title: 'Will BTC close above 100k?\u202E',
        outcome: 'Y\u0435s',
        current_size: '10',
        avg_price: '0.5',
        current_price: '0.5',
        current_value: '5',
        unrealized_pnl: '0',
      };
      hop.lies.rewrite = (a) =>
        a.path === '/data/v2/positions' ? { data: [row], pagination: { next_cursor: null } } : undefined;
      const r = (await callAs(bg, 'data.portfolio', { account: kit.owner() })) as {
        ok: boolean;
        result: { positions: { title: string; outcome: string }[] };
      };
      hop.lies.rewrite = undefined;
      expect(r.ok).toBe(true);
      const [p] = r.result.positions;
      const short = `${token.slice(0, 6)}…${token.slice(-4)}`;
      expect(p!.title).toBe(`market of token ${short}`);
      expect(p!.outcome).toBe(`token ${short}`);
    },
    30_000,
  );
});

describe('order-book market words', () => {
  it(
    'a market question and outcome labels a catalogue serves with bidi or look-alike ' +
      'characters are refused: the market is named by its token and the outcomes by their place',
    async () => {
      const bg = await onHop();
      hop.lies.rewrite = (a) => {
        if (a.path !== '/gamma/markets/keyset') return undefined;
        const b = a.body as { markets: Record<string, unknown>[] };
        return {
          ...b,
          markets: b.markets.map((m) => ({
            ...m,
            question: 'Will BTC close above 100k?\u202E',
            outcomes: JSON.stringify(['Y\u0435s', 'No\u200B']),
          })),
        };
      };
      const r = (await callAs(bg, 'catalogue.markets', {})) as {
        ok: boolean;
        result: { markets: { question: string; outcomes: string[]; tokenIds: string[] }[] };
      };
      expect(r.ok).toBe(true);
      const [m] = r.result.markets;
      expect(m!.question).toBe(`market of token ${m!.tokenIds[0]!.slice(0, 6)}…${m!.tokenIds[0]!.slice(-4)}`);
      expect(m!.outcomes).toEqual(['outcome 1', 'outcome 2']);
      hop.lies.rewrite = undefined;
    },
    30_000,
  );
});

describe('cancel windows', () => {
  /** The perps commands that reached the venue since `from` (the sandbox's request log): each signed `op`. */
  const sentCancels = (from: number) =>
    h.ctx.requestLog
      .slice(from)
      .filter((r) => r.method === 'DELETE' || (r.method === 'POST' && /cancel/i.test(r.path)))
      .map((r) => (JSON.parse(r.body ?? '{}') as { op?: { type: string; args: unknown } }).op);

  it(
    'a cancel window names the order by the id the signature ' +
      'commits to, whatever the open-orders read says the order is',
    async () => {
      const bg = await onHop();
      const coid = `${Date.now().toString(16)}`.padStart(32, 'a');
      const placed = (await callAs(bg, 'perps.send', {
        account: h.demo.owner.address,
        op: (await kit.restingBtc(coid)).op,
      })) as { ok: boolean; result: { oid: number }[] };
      expect(placed.ok).toBe(true);
      const oid = placed.result[0]!.oid;
      // The gateway says the order is a tiny sell on another instrument.
      const lie = (o: Record<string, unknown>) =>
        o.order_id === oid
          ? { ...o, buy: false, quantity: '0.001', resting_quantity: '0.001', price: '1', instrument_id: 2 }
          : o;
      hop.lies.rewrite = (a) =>
        /\/perps\/v1\/account\/(open)?[oO]rders/.test(a.path) && Array.isArray(a.body) ? a.body.map(lie) : undefined;
      const from = h.ctx.requestLog.length;
      const cancel = bg.page(page).request('perps_sendCommand', { op: { type: 'cancelOrders', args: [oid] } });
      const { text, view } = await readAndApprove(bg);
      await cancel;
      const ops = sentCancels(from).filter((o) => o?.type === 'cancelOrders');
      expect(ops).toEqual([{ type: 'cancelOrders', args: [oid] }]);
      for (const line of [view.lines.join(' '), text, await lastAudit(bg)]) {
        expect(line).toContain(`#${oid}`);
        expect(line).not.toMatch(/Sell|0\.001|instrument #2|ETH-PERP/);
      }
      hop.lies.rewrite = undefined;
    },
    30_000,
  );

  it(
    'a cancel by client order id shows each client order id the ' +
      'signature commits to in full, in the window and the audit entry',
    async () => {
      const bg = await onHop();
      const coids = [
        `${Date.now().toString(16)}`.padStart(32, 'b'),
        `${Date.now().toString(16)}`.padStart(31, 'b').padEnd(32, 'f'),
      ];
      const from = h.ctx.requestLog.length;
      const cancel = kit.settle(
        bg.page(page).request('perps_sendCommand', { op: { type: 'cancelOrdersCOID', args: coids } }),
      );
      const { text, view } = await readAndApprove(bg);
      await cancel;
      const [op] = sentCancels(from).filter((o) => o?.type === 'cancelOrdersCOID');
      expect(op?.args).toEqual(coids);
      for (const line of [view.lines.join(' '), text, await lastAudit(bg)])
        for (const c of coids) expect(line).toContain(c);
    },
    30_000,
  );
});

describe('order-book exchange selection', () => {
  it(
    'a neg-risk flag the gateway flips chooses the exchange contract the window names: the ' +
      'window says negative-risk, and the exchange refuses an order signed for the other contract',
    async () => {
      const bg = await onHop();
      const market = h.ctx.clob.markets.find((m) => !m.negRisk) ?? h.ctx.clob.markets[0]!;
      const token = market.tokenIds[0]!;
      hop.lies.rewrite = (a) => {
        if (a.path === '/clob/neg-risk') return { neg_risk: !market.negRisk };
        if (a.path === '/clob/book') return { ...(a.body as object), neg_risk: !market.negRisk };
        return undefined;
      };
      const from = h.ctx.requestLog.length;
      const order = kit.settle(
        bg.page(page).request('clob_postOrders', {
          orders: [{ tokenId: token, side: 'BUY', price: '0.40', size: '10', orderType: 'GTC' }],
        }),
      );
      const { text, view } = await readAndApprove(bg);
      await order;
      const posted = h.ctx.requestLog.slice(from).filter((r) => r.method === 'POST' && r.path === '/clob/order');
      // What the window says about the exchange is what the signature commits to.
      expect(view!.lines.join(' ').includes('negative-risk market')).toBe(!market.negRisk);
      expect(text.includes('negative-risk')).toBe(!market.negRisk);
      // The exchange verifies the signature against the market's own contract: nothing signed for the other one is
      // accepted.
      expect(posted.length).toBeGreaterThan(0);
      expect(posted.every((r) => r.status !== 200)).toBe(true);
      hop.lies.rewrite = undefined;
    },
    30_000,
  );
});
