/**
 * The first unlock after a killed browser writes one audit entry per journal record left open, and `ok`
 * only when the venue holds that very submission (README "Your orders when the browser dies";
 * `lib/audit/reconcile.ts`, `lib/background/venue-lookup.ts`):
 * - the order-book exchange answering `GET /data/order/{hash}` 200 with no order (`null`, as the real
 *   exchange may for an order it does not hold): an order never posted is not `ok`;
 * - a perps order reusing a client order id the venue already holds, that never left: not `ok` because of
 *   the other order;
 * - a submission answered and recorded, the worker (or browser) dying before its journal record's delete
 *   lands: no second entry;
 * - a perps batch of more than 64 orders with client order ids is asked about like any other.
 * The real background on the fake browser against the in-process sandbox; a browser restart is a second
 * background on the same database with `storage.session` cleared and `runtime.onStartup` fired.
 */
import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import { fakeBrowser } from 'wxt/testing/fake-browser';
import type { Harness } from '../../test/kits/sandbox';
import type { AuditJournal } from '../audit/journal';
import { startBackground } from './index';
import {
  BOUNDS,
  browser,
  callAs,
  KDF,
  onboardDemo,
  pageSender,
  recordingFetch,
  sandboxSuite,
  sleep,
  until,
  waitPending,
  withPages,
  markPrice,
  type PagedBackground,
  type Reply,
  type SentRequest,
} from '../../test/kits/background';

const SITE = 'https://trade.example';
const page = pageSender(SITE, 3);
const PASSWORD = 'a good password';

let h: Harness;
const started = sandboxSuite((x) => (h = x));
let n = 0;

/**
 * `holdSend`: order submissions never leave; `orderLookup`: the answer swapped in for `GET /clob/data/order/{hash}`.
 */
type Wire = { sent: SentRequest[]; holdSend?: boolean; holdAnswer?: boolean; orderLookup?: () => Response };
const submission = (url: string, method: string) =>
  method === 'POST' && (/\/perps\/v1\/trade\/orders$/.test(url) || /\/clob\/orders?$/.test(url));
const never = new Promise<never>(() => undefined);

async function ready(o: { dbName?: string; onboard?: boolean; wire?: Wire } = {}) {
  const wire: Wire = o.wire ?? { sent: [] };
  const fetchFn = recordingFetch(wire, {
    beforeSend: (url, method) => (wire.holdSend && submission(url, method) ? never : undefined),
    onAnswer: (url, method, res) =>
      wire.holdAnswer && submission(url, method)
        ? never
        : method === 'GET' && /\/clob\/data\/order\//.test(url) && wire.orderLookup
          ? wire.orderLookup()
          : res,
  });
  const dbName = o.dbName ?? `reconcile-verdicts-${n++}`;
  const bg = withPages(startBackground({ browser, dbName, kdf: KDF, bounds: BOUNDS, fetchFn }));
  started.push(bg);
  if (o.onboard !== false) await onboardDemo(bg, h, page);
  return { bg, wire, dbName };
}

async function browserRestart(dbName: string, wire: Wire): Promise<PagedBackground> {
  wire.holdSend = false;
  wire.holdAnswer = false;
  await fakeBrowser.storage.session.clear();
  const { bg } = await ready({ dbName, onboard: false, wire });
  await bg.ready;
  await fakeBrowser.runtime.onStartup.trigger();
  return bg;
}

const call = async (bg: PagedBackground, type: string, payload: unknown = {}) =>
  (await callAs(bg, type, payload)) as Reply;
const unlock = async (bg: PagedBackground) =>
  expect((await call(bg, 'vault.unlock', { password: PASSWORD })).ok).toBe(true);
type Entry = { at: number; kind: string; result: string; detail?: string; digest?: string; summary: string };
const entries = async (bg: PagedBackground, kind: string) =>
  ((await call(bg, 'audit.list', { kind, limit: 100 })).result ?? []) as Entry[];
const settle = <T>(p: Promise<T>) =>
  p.then(
    (r) => ({ r, e: undefined as unknown }),
    (e: unknown) => ({ r: undefined as T | undefined, e }),
  );
const restingBtc = async (coid: string, qty = '0.01') => ({
  op: {
    type: 'createOrders',
    args: [
      { iid: 1, buy: true, qty, p: (Number(await markPrice(h, 1)) * 0.99).toFixed(0), tif: 'gtc', po: true, c: coid },
    ],
  },
});
const bookOrder = () => ({
  orders: [{ tokenId: h.ctx.clob.markets[0]!.tokenIds[0]!, side: 'BUY', price: '0.40', size: '10', orderType: 'GTC' }],
});

async function approved(bg: PagedBackground, method: string, params: unknown) {
  const answer = settle(bg.page(page).request(method, params));
  const [view] = await waitPending(bg);
  bg.registry.decide(view!.id, { approve: true, digest: view!.digest });
  return { answer, digest: view!.digest };
}

/** The entries reconciliation wrote (its detail names the stop). */
const reconciled = (es: Entry[]) => es.filter((e) => /Countersign stopped after this was sent/.test(e.detail ?? ''));

describe('reconciliation records `ok` only for what the venue holds', () => {
  it(
    'an order-book order never posted (the browser died first), the exchange ' +
      'answering GET /data/order/{hash} 200 null: its entry is not `ok`',
    async () => {
      const { bg, wire, dbName } = await ready();
      const held = h.ctx.clob.orders.size;
      wire.holdSend = true;
      void (await approved(bg, 'clob_postOrders', bookOrder()));
      await until(() => wire.sent.some((s) => submission(s.url, s.method)));
      wire.orderLookup = () => new Response('null', { status: 200, headers: { 'content-type': 'application/json' } });
      const next = await browserRestart(dbName, wire);
      await unlock(next);
      let es: Entry[] = [];
      await until(async () => (es = reconciled(await entries(next, 'clob.postOrders'))).length > 0);
      expect(h.ctx.clob.orders.size, 'nothing reached the exchange').toBe(held);
      expect(es[0]!.result, `the exchange holds no such order (${es[0]!.detail})`).not.toBe('ok');
    },
    30_000,
  );

  it(
    'a perps order reusing the client order id of an order the venue ' +
      'holds, never sent (the browser died first): its entry is not `ok`',
    async () => {
      const { bg, wire, dbName } = await ready();
      const coid = 'c1'.repeat(16);
      const a = await approved(bg, 'perps_sendCommand', await restingBtc(coid));
      expect((await a.answer).e).toBeUndefined(); // order A rests at the venue with coid c1…
      wire.holdSend = true;
      // …order B (0.05) with the same coid never leaves
      void (await approved(bg, 'perps_sendCommand', await restingBtc(coid, '0.05')));
      await until(() => wire.sent.filter((s) => submission(s.url, s.method)).length === 2);
      const next = await browserRestart(dbName, wire);
      await unlock(next);
      let es: Entry[] = [];
      await until(async () => (es = reconciled(await entries(next, 'perps.createOrders'))).length > 0);
      expect([...h.ctx.venue.orders.values()].filter((o) => o.coid === coid)).toHaveLength(1);
      expect(es[0]!.result, `order B never reached the venue; the venue holds order A (${es[0]!.detail})`).not.toBe(
        'ok',
      );
    },
    30_000,
  );
});

describe('reconciliation records each submission once', () => {
  it(
    'an order answered and recorded (`ok`), the browser killed before ' +
      'its journal record was deleted: the next unlock adds no second entry',
    async () => {
      const { bg, wire, dbName } = await ready();
      // The stopped worker's journal delete never lands (it was killed right after the audit entry's commit).
      const j = (bg.service() as unknown as { o: { journal: AuditJournal } }).o.journal;
      j.close = () => new Promise(() => undefined);
      const a = await approved(bg, 'perps_sendCommand', await restingBtc('c2'.repeat(16)));
      expect((await a.answer).e).toBeUndefined();
      await until(async () => (await entries(bg, 'perps.createOrders')).length === 1);
      const next = await browserRestart(dbName, wire);
      await unlock(next);
      await sleep(1_000);
      const es = await entries(next, 'perps.createOrders');
      expect(
        es.map((e) => `${e.result}: ${e.detail ?? ''}`),
        'one submission, one entry',
      ).toHaveLength(1);
    },
    30_000,
  );
});

describe('reconciliation asks about every batch the signer sends', () => {
  it(
    'a perps batch of 65 orders with client order ids (PERPS_MAX_BATCH is 100) the venue ' +
      'accepted, answer never read: its entry is `ok` (the venue holds it), not "check the venue"',
    async () => {
      const { bg, wire, dbName } = await ready();
      wire.holdAnswer = true;
      const p = (Number(await markPrice(h, 1)) * 0.9).toFixed(0);
      const args = Array.from({ length: 65 }, (_, i) => ({
        iid: 1,
        buy: true,
        qty: '0.001',
        p,
        tif: 'gtc',
        po: true,
        c: i.toString(16).padStart(32, '0'),
      }));
      const before = h.ctx.venue.orders.size;
      void (await approved(bg, 'perps_sendCommand', { op: { type: 'createOrders', args } }));
      await until(() => h.ctx.venue.orders.size >= before + 65);
      await sleep(500); // the venue's answer reaches the dead browser's held fetch (never read)
      const next = await browserRestart(dbName, wire);
      await unlock(next);
      let es: Entry[] = [];
      await until(async () => (es = reconciled(await entries(next, 'perps.createOrders'))).length > 0);
      expect(es[0]!.result, `the venue holds all 65 (${es[0]!.detail})`).toBe('ok');
    },
    30_000,
  );
});
