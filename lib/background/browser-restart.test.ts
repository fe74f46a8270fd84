/**
 * What was sent is known after the whole browser dies, not only the worker: the audit journal's records
 * and the keyed submissions' records live in IndexedDB, so a browser that is killed mid-submission and
 * started again (storage.session empty, the vault locked, every grant ended) still
 * - answers a keyed retry with the first request's answer, or with "unknown — look it up" (-32002) when
 *   the answer never came — never with a second signature;
 * - at the first unlock, asks the venue about each submission in flight (perps by client order id, the
 *   order book by order hash) and writes its audit entry, dated when it was sent: `ok` when the venue
 *   holds it, `unknown` when the venue holds none of its ids.
 * The real background on the fake browser against the in-process sandbox; a browser restart is a second
 * background on the same database with `storage.session` cleared and `runtime.onStartup` fired (the first
 * background is treated as dead: its held requests never finish before the checks).
 */
import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import { fakeBrowser } from 'wxt/testing/fake-browser';
import type { Harness } from '../../test/kits/sandbox';
import { startBackground } from './index';
import type { VaultCopyStore } from '../vault/copy';
import { memoryCopy } from '../../test/kits/vault-copy';
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
  type Notice,
  type PagedBackground,
  type Reply,
  type SentRequest,
} from '../../test/kits/background';

const SITE = 'https://trade.example';
const page = pageSender(SITE, 3);
const PASSWORD = 'a good password'; // onboardDemo's

let h: Harness;
const started = sandboxSuite((x) => (h = x));
let n = 0;

/**
 * A wire whose order submissions can be held before they leave (`holdSend`) or after the venue answered (`holdAnswer`),
 * for ever: the browser dies meanwhile.
 */
type Wire = { sent: SentRequest[]; holdSend?: boolean; holdAnswer?: boolean };
const submission = (url: string, method: string) =>
  method === 'POST' && (/\/perps\/v1\/trade\/orders$/.test(url) || /\/clob\/orders?$/.test(url));
const never = new Promise<never>(() => undefined);
const posts = (w: Wire, venue: 'perps' | 'clob') =>
  w.sent.filter((s) => submission(s.url, s.method) && s.url.includes(`/${venue}/`)).length;

async function ready(
  o: { dbName?: string; onboard?: boolean; wire?: Wire; notices?: Notice[]; copy?: VaultCopyStore } = {},
): Promise<{ bg: PagedBackground; wire: Wire; dbName: string; notices: Notice[] }> {
  const wire: Wire = o.wire ?? { sent: [] };
  const notices = o.notices ?? [];
  const fetchFn = recordingFetch(wire, {
    beforeSend: (url, method) => (wire.holdSend && submission(url, method) ? never : undefined),
    onAnswer: (url, method, res) => (wire.holdAnswer && submission(url, method) ? never : res),
  });
  const dbName = o.dbName ?? `browser-restart-${n++}`;
  const notifying = {
    ...browser,
    notifications: {
      create: async (id: string, y: { title: string; message: string }) => (
        notices.push({ id, title: y.title, message: y.message }),
        id
      ),
    },
  };
  const bg = withPages(
    startBackground({
      browser: notifying,
      dbName,
      kdf: KDF,
      bounds: BOUNDS,
      fetchFn,
      ...(o.copy ? { vaultCopy: o.copy } : {}),
    }),
  );
  started.push(bg);
  if (o.onboard !== false) await onboardDemo(bg, h, page);
  return { bg, wire, dbName, notices };
}

/**
 * The browser dies and starts again: storage.session is gone, a new background starts on the same database, `onStartup`
 * fires.
 */
async function browserRestart(
  dbName: string,
  wire: Wire,
  notices: Notice[] = [],
  copy?: VaultCopyStore,
): Promise<PagedBackground> {
  wire.holdSend = false;
  wire.holdAnswer = false;
  await fakeBrowser.storage.session.clear();
  const { bg } = await ready({ dbName, onboard: false, wire, notices, ...(copy ? { copy } : {}) });
  await bg.ready;
  await fakeBrowser.runtime.onStartup.trigger();
  return bg;
}

const call = async (bg: PagedBackground, type: string, payload: unknown = {}) =>
  (await callAs(bg, type, payload)) as Reply;
const unlock = async (bg: PagedBackground) =>
  expect((await call(bg, 'vault.unlock', { password: PASSWORD })).ok).toBe(true);
type Entry = { at: number; kind: string; result: string; detail?: string; digest?: string };
const entries = async (bg: PagedBackground, kind: string) =>
  ((await call(bg, 'audit.list', { kind, limit: 100 })).result ?? []) as Entry[];
const settle = <T>(p: Promise<T>) =>
  p.then(
    (r) => ({ r, e: undefined as unknown }),
    (e: unknown) => ({ r: undefined as T | undefined, e }),
  );
const codeOf = (e: unknown) => (e as { code?: number } | undefined)?.code;

const perpsOrder = async (coid: string, key: string) => ({
  op: {
    type: 'createOrders',
    args: [
      {
        iid: 1,
        buy: true,
        qty: '0.01',
        p: (Number(await markPrice(h, 1)) * 0.99).toFixed(0),
        tif: 'gtc',
        po: true,
        c: coid,
      },
    ],
  },
  idempotencyKey: key,
});
const bookOrder = (key: string) => ({
  orders: [{ tokenId: h.ctx.clob.markets[0]!.tokenIds[0]!, side: 'BUY', price: '0.40', size: '10', orderType: 'GTC' }],
  idempotencyKey: key,
});

/**
 * Sends `method(params)` from the page and approves its window; resolves once it has left (`left()`) — its promise
 * settles later, or never.
 */
async function approved(bg: PagedBackground, method: string, params: unknown) {
  const answer = settle(bg.page(page).request(method, params));
  const [view] = await waitPending(bg);
  bg.registry.decide(view!.id, { approve: true, digest: view!.digest });
  return { answer, digest: view!.digest };
}

describe('a keyed retry after the browser died', () => {
  it(
    'an order-book order answered just before the browser died: after the restart and unlock the same ' +
      'keyed request gets the first answer back; nothing is signed or posted again, no window opens',
    async () => {
      const { bg, wire, dbName } = await ready();
      const first = await approved(bg, 'clob_postOrders', bookOrder('answered-1'));
      const { r: answer, e } = await first.answer;
      expect(e).toBeUndefined();
      await sleep(50); // the answered record is written behind the answer
      const before = posts(wire, 'clob');
      const next = await browserRestart(dbName, wire);
      await unlock(next);
      const retry = await settle(next.page(page).request('clob_postOrders', bookOrder('answered-1')));
      expect(next.registry.size, 'no window').toBe(0);
      expect(retry.e).toBeUndefined();
      expect(retry.r).toEqual(answer);
      expect(posts(wire, 'clob')).toBe(before);
      // The same key on another request is refused (the venue answered the first): nothing posted.
      const other = await settle(
        next.page(page).request('clob_postOrders', {
          ...bookOrder('answered-1'),
          orders: [{ ...bookOrder('x').orders[0]!, size: '11' }],
        }),
      );
      expect(codeOf(other.e)).toBe(-32602);
      expect(posts(wire, 'clob')).toBe(before);
    },
    30_000,
  );

  it(
    'a perps order the venue accepted but whose answer the dead browser never read: the ' +
      'keyed retry after the restart is -32002 with its lookup, and reaches the venue once',
    async () => {
      const { bg, wire, dbName } = await ready();
      wire.holdAnswer = true;
      const coid = 'ab'.repeat(16);
      void (await approved(bg, 'perps_sendCommand', await perpsOrder(coid, 'in-flight-1')));
      await until(() => posts(wire, 'perps') === 1);
      await sleep(300); // the venue has it; its answer reaches the held fetch (never read)
      const next = await browserRestart(dbName, wire);
      await unlock(next);
      const retry = await settle(next.page(page).request('perps_sendCommand', await perpsOrder(coid, 'in-flight-1')));
      expect(codeOf(retry.e)).toBe(-32002);
      expect((retry.e as { data?: Record<string, unknown> }).data).toMatchObject({
        command: 'createOrders',
        coids: coid,
        idempotencyKey: 'in-flight-1',
      });
      expect(next.registry.size).toBe(0);
      expect(posts(wire, 'perps')).toBe(1);
    },
    30_000,
  );
});

describe('the first unlock after the browser died records what was in flight', () => {
  it(
    'a perps order and an order-book order the venue accepted, answers never ' +
      'read: after the unlock each has an `ok` entry dated when it was sent ' +
      '("the venue holds it"), and the person is told; none before the unlock',
    async () => {
      const { bg, wire, dbName } = await ready();
      wire.holdAnswer = true;
      const sentAt = Date.now();
      void (await approved(bg, 'perps_sendCommand', await perpsOrder('cd'.repeat(16), 'p-1')));
      const book = await approved(bg, 'clob_postOrders', bookOrder('b-1'));
      await until(() => posts(wire, 'perps') === 1 && posts(wire, 'clob') === 1);
      await sleep(300); // the answers reach the held fetches (never read)
      const notices: Notice[] = [];
      const next = await browserRestart(dbName, wire, notices);
      await sleep(200);
      expect(
        notices.filter((x) => x.title === 'Sent before Countersign stopped'),
        'nothing is reconciled while locked',
      ).toHaveLength(0);
      await unlock(next);
      let perps: Entry[] = [];
      let clob: Entry[] = [];
      await until(async () => {
        perps = await entries(next, 'perps.createOrders');
        clob = await entries(next, 'clob.postOrders');
        return perps.length > 0 && clob.length > 0;
      });
      for (const e of [...perps, ...clob]) {
        expect(e).toMatchObject({ result: 'ok' });
        expect(e.detail).toMatch(/the venue holds it/);
        expect(e.at).toBeGreaterThanOrEqual(sentAt);
        expect(e.at).toBeLessThan(Date.now() - 150); // dated when it was sent, not when it was recorded
      }
      expect(clob[0]!.digest).toBe(book.digest);
      expect(notices.filter((x) => x.title === 'Sent before Countersign stopped')).toHaveLength(2);
      // A second unlock records nothing again.
      await call(next, 'vault.lock');
      await unlock(next);
      await sleep(200);
      expect((await entries(next, 'perps.createOrders')).length + (await entries(next, 'clob.postOrders')).length).toBe(
        2,
      );
    },
    30_000,
  );

  it(
    'an order signed and journalled but never sent (the browser died before the post ' +
      'left): after the unlock its entry is `unknown` — the venue holds no order with its ids',
    async () => {
      const { bg, wire, dbName } = await ready();
      const held = () => h.ctx.venue.orders.size + h.ctx.clob.orders.size;
      const before = held();
      wire.holdSend = true;
      void (await approved(bg, 'perps_sendCommand', await perpsOrder('ef'.repeat(16), 'never-1')));
      void (await approved(bg, 'clob_postOrders', bookOrder('never-2')));
      // logged, held before leaving
      await until(() => wire.sent.filter((s) => submission(s.url, s.method)).length === 2);
      const next = await browserRestart(dbName, wire);
      await unlock(next);
      let all: Entry[] = [];
      await until(
        async () =>
          (all = [...(await entries(next, 'perps.createOrders')), ...(await entries(next, 'clob.postOrders'))])
            .length === 2,
      );
      for (const e of all) {
        expect(e.result).toBe('unknown');
        expect(e.detail).toMatch(/holds no order with its ids/);
      }
      expect(held(), 'nothing reached the venue').toBe(before);
    },
    30_000,
  );
});

describe('a database the browser discarded after the crash', () => {
  it(
    "the vault comes back from its copy at the unlock, the venues' orders of the " +
      'last 24 h are recorded (`unknown`, "found at the venue") and the person is told',
    async () => {
      const copy = memoryCopy();
      const { bg, wire, dbName } = await ready({ copy });
      wire.holdAnswer = true;
      const coid = '9a'.repeat(16);
      void (await approved(bg, 'perps_sendCommand', await perpsOrder(coid, 'lost-1')));
      const book = await approved(bg, 'clob_postOrders', bookOrder('lost-2'));
      await until(() => posts(wire, 'perps') === 1 && posts(wire, 'clob') === 1);
      await sleep(300);
      const db = bg.db(); // Chromium found it damaged and deleted it: the next start finds it empty
      for (const name of [...db.objectStoreNames]) await db.clear(name);
      const notices: Notice[] = [];
      const next = await browserRestart(dbName, wire, notices, copy);
      expect((await call(next, 'vault.status')).result).toMatchObject({ recoverable: true });
      await unlock(next);
      let found: Entry[] = [];
      await until(
        async () =>
          (found = [...(await entries(next, 'perps.createOrders')), ...(await entries(next, 'clob.postOrders'))].filter(
            (e) => /found at the venue afterwards/.test(e.detail ?? ''),
          )).length >= 2,
      );
      expect(found.every((e) => e.result === 'unknown')).toBe(true);
      expect(found.some((e) => e.digest === coid)).toBe(true);
      expect(found.some((e) => e.digest === book.digest || h.ctx.clob.orders.has(e.digest ?? ''))).toBe(true);
      expect(notices.map((x) => x.title)).toContain("Countersign's records were lost");
      // A second unlock sweeps nothing again.
      const before = found.length;
      await call(next, 'vault.lock');
      await unlock(next);
      await sleep(300);
      expect(
        [...(await entries(next, 'perps.createOrders')), ...(await entries(next, 'clob.postOrders'))].filter((e) =>
          /found at the venue afterwards/.test(e.detail ?? ''),
        ),
      ).toHaveLength(before);
    },
    30_000,
  );
});
