/**
 * Submissions whose outcome the page cannot know, through the real background on the fake
 * browser against the in-process sandbox:
 * - an order-book post whose answer never came names the orders' hashes (`data.orderHashes`, the EIP-712
 *   digests that were signed), which the typed dapp client reads as `OutcomeUnknownError.orderHashes`;
 * - an error raised *after* the venue accepted (the audit append failing) never reaches the page: the append
 *   runs after the answer went back, so the page has the venue's answer (no error a client would retry into
 *   a second order), and the person gets a notification instead;
 * - a keyed perps command of any type (`idempotencyKey`) gets its unknown outcome again on a repeat,
 *   with what the page can look it up by (the key, the envelope's salt and ts, the digest signed);
 * - the records survive a worker restart (a second background on the same database).
 */
import 'fake-indexeddb/auto';
import { describe, expect, it, vi } from 'vitest';
import { fakeBrowser } from 'wxt/testing/fake-browser';
import type { Harness } from '../../test/kits/sandbox';
import { startBackground } from '../background/index';
import { BOUNDS, browser, KDF, onboardDemo, sandboxSuite, waitPending, withPages } from '../../test/kits/background';
import { toCountersignError, OutcomeUnknownError } from '../dapp/errors';
import { ConflictError } from '../audit';

/** A fetch that counts the order / command submissions it sends and can lose their answers (`drop`). */
function wire() {
  const net = { drop: false, cut: false, posts: 0 };
  const submission = (url: string, method: string) =>
    (method === 'POST' && /\/clob\/orders?$/.test(url)) || (method !== 'GET' && url.includes('/perps/v1/trade/'));
  const fetchFn: typeof fetch = async (input, init) => {
    const url = String(input instanceof Request ? input.url : input);
    if (net.cut) throw new TypeError('fetch failed');
    const sub = submission(url, init?.method ?? 'GET');
    if (sub) net.posts++;
    const res = await fetch(input, init);
    if (sub && net.drop) throw new TypeError('fetch failed: socket hang up (ECONNRESET)');
    return res;
  };
  return { net, fetchFn };
}

const SITE = 'https://trade.example';
const page = {
  get id() {
    return fakeBrowser.runtime.id;
  },
  url: `${SITE}/app`,
  frameId: 0,
  tab: { id: 3, url: `${SITE}/app` },
};
let h: Harness;
sandboxSuite((x) => (h = x));

describe('unknown outcome of an order-book post', () => {
  it('carries the signed order hashes to the page, and the typed client reads them', async () => {
    let drop = false;
    const fetchFn: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
      if (drop && init?.method === 'POST' && /\/clob\/orders?$/.test(String(input)))
        throw new TypeError('fetch failed: socket hang up (ECONNRESET)');
      return res;
    };
    const bg = withPages(startBackground({ browser, dbName: 'outcome-1', kdf: KDF, bounds: BOUNDS, fetchFn }));
    await onboardDemo(bg, h, page, { connect: true });
    const token = h.ctx.clob.markets[0]!.tokenIds[0]!;
    drop = true;
    const lost = bg
      .page(page)
      .request('clob_postOrders', {
        orders: [{ tokenId: token, side: 'BUY', price: '0.40', size: '10', orderType: 'GTC' }],
        idempotencyKey: 'k-1',
      })
      .catch((e: unknown) => e);
    const [view] = await waitPending(bg);
    const hashes = [...(view!.artifact?.signDigests ?? [])];
    bg.registry.decide(view!.id, { approve: true, digest: view!.digest });
    const err = await lost;
    expect(err).toMatchObject({ code: -32002, data: { command: 'postOrders', orderHashes: hashes.join(',') } });
    const typed = toCountersignError(err);
    expect(typed).toBeInstanceOf(OutcomeUnknownError);
    expect((typed as OutcomeUnknownError).orderHashes).toEqual(hashes);
  });
});

describe('an error after the venue accepted, and keyed repeats', () => {
  const order = (token: string, key: string) => ({
    orders: [{ tokenId: token, side: 'BUY', price: '0.40', size: '10', orderType: 'GTC' }],
    idempotencyKey: key,
  });

  it(
    "an audit failure after the answer: the page gets the venue's " +
      'answer (never an error a client retries), and the person is told',
    async () => {
      const { net, fetchFn } = wire();
      const created: { title: string; message: string }[] = [];
      const notifying = {
        ...browser,
        notifications: { create: async (id: string, o: { title: string; message: string }) => (created.push(o), id) },
      };
      const bg = withPages(
        startBackground({ browser: notifying, dbName: 'outcome-2', kdf: KDF, bounds: BOUNDS, fetchFn }),
      );
      await onboardDemo(bg, h, page, { connect: true });
      // The audit log "keeps changing" when the accepted order is recorded (Audit.ConflictError): the append
      // runs after the answer went back, so the page has the order's result; a retry would be a second order.
      const svc = bg.service() as unknown as { audit: (e: { kind: string; result: string }) => Promise<void> };
      const audit = svc.audit.bind(svc);
      svc.audit = async (e) => {
        if (e.kind === 'clob.postOrders' && e.result === 'ok') throw new ConflictError();
        return audit(e);
      };
      const token = h.ctx.clob.markets[0]!.tokenIds[0]!;
      const first = bg
        .page(page)
        .request('clob_postOrders', order(token, 'k-audit'))
        .catch((e: unknown) => e);
      const [view] = await waitPending(bg);
      bg.registry.decide(view!.id, { approve: true, digest: view!.digest });
      const answer = (await first) as { success: boolean; orderID: string }[];
      expect(answer, 'the venue accepted the order: the page is told so').toMatchObject([{ success: true }]);
      expect(answer[0]!.orderID).toMatch(/^0x[0-9a-f]{64}$/);
      expect(net.posts).toBe(1);
      await vi.waitFor(() =>
        expect(created).toContainEqual(expect.objectContaining({ title: 'Not in the audit log' })),
      );
      expect(created.find((c) => c.title === 'Not in the audit log')?.message).toContain('order');
    },
  );

  it(
    'perps_sendCommand with an idempotencyKey (any command): a lost ' +
      'answer names the key, salt, ts and digest; the repeat sends nothing',
    async () => {
      const { net, fetchFn } = wire();
      const bg = withPages(startBackground({ browser, dbName: 'outcome-3', kdf: KDF, bounds: BOUNDS, fetchFn }));
      await onboardDemo(bg, h, page, { connect: true });
      const lev = { op: { type: 'updateLeverage', args: { iid: 1, lev: 3, cross: true } }, idempotencyKey: 'lev-1' };
      net.drop = true;
      const first = bg
        .page(page)
        .request('perps_sendCommand', lev)
        .catch((e: unknown) => e);
      const [view] = await waitPending(bg);
      bg.registry.decide(view!.id, { approve: true, digest: view!.digest });
      const err = (await first) as { code: number; data: Record<string, unknown> };
      expect(err).toMatchObject({ code: -32002, data: { command: 'updateLeverage', idempotencyKey: 'lev-1' } });
      expect(err.data.digest).toMatch(/^0x[0-9a-f]{64}$/);
      expect(typeof err.data.salt).toBe('number');
      expect(typeof err.data.ts).toBe('number');
      expect(err.data).not.toHaveProperty('coids');
      const typed = toCountersignError(err) as OutcomeUnknownError;
      expect(typed.idempotencyKey).toBe('lev-1');
      expect(typed.perpsCommand).toEqual({ digest: err.data.digest, salt: err.data.salt, ts: err.data.ts });
      expect(net.posts).toBe(1);
      net.drop = false;
      const again = await bg
        .page(page)
        .request('perps_sendCommand', lev)
        .catch((e: unknown) => e);
      expect(again).toMatchObject({ code: -32002, data: err.data });
      expect(bg.registry.size).toBe(0);
      expect(net.posts).toBe(1);
      // Without the key, the same command is a new one (it asks).
      const unkeyed = bg
        .page(page)
        .request('perps_sendCommand', { op: lev.op })
        .catch((e: unknown) => e);
      const [second] = await waitPending(bg);
      expect(second).toBeDefined();
      bg.registry.decide(second!.id, { approve: false });
      await unkeyed;
      // A signed-only command submits nothing: a key there is refused, naming the field.
      expect(
        await bg
          .page(page)
          .request('perps_signCommand', lev)
          .catch((e: unknown) => e),
      ).toMatchObject({ code: -32602, message: expect.stringContaining('idempotencyKey') });
    },
  );

  it(
    'a keyed unknown outcome survives a worker restart: the ' +
      'repeat on the new worker sends nothing and opens no window',
    async () => {
      const one = wire();
      const bg1 = withPages(
        startBackground({ browser, dbName: 'outcome-4', kdf: KDF, bounds: BOUNDS, fetchFn: one.fetchFn }),
      );
      await onboardDemo(bg1, h, page, { connect: true });
      const token = h.ctx.clob.markets[0]!.tokenIds[0]!;
      one.net.drop = true;
      const first = bg1
        .page(page)
        .request('clob_postOrders', order(token, 'k-restart'))
        .catch((e: unknown) => e);
      const [view] = await waitPending(bg1);
      bg1.registry.decide(view!.id, { approve: true, digest: view!.digest });
      const err = await first;
      expect(err).toMatchObject({ code: -32002, data: { command: 'postOrders', idempotencyKey: 'k-restart' } });
      // The worker stops: a new background on the same database and storage.session (fakeBrowser is not reset).
      one.net.cut = true;
      const two = wire();
      const bg2 = withPages(
        startBackground({ browser, dbName: 'outcome-4', kdf: KDF, bounds: BOUNDS, fetchFn: two.fetchFn }),
      );
      await bg2.ready;
      const again = await bg2
        .page(page)
        .request('clob_postOrders', order(token, 'k-restart'))
        .catch((e: unknown) => e);
      expect(again).toMatchObject({ code: -32002, data: (err as { data: unknown }).data });
      expect(bg2.registry.size).toBe(0);
      expect(two.net.posts).toBe(0);
      // Another key is a new order on the new worker (it asks).
      const other = bg2
        .page(page)
        .request('clob_postOrders', order(token, 'k-other'))
        .catch((e: unknown) => e);
      expect(await waitPending(bg2)).toHaveLength(1);
      bg2.registry.decide(bg2.registry.list()[0]!.id, { approve: false });
      await other;
    },
  );
});

describe("keyed submissions' records", () => {
  const order = (token: string, key?: string) => ({
    orders: [{ tokenId: token, side: 'BUY', price: '0.40', size: '10', orderType: 'GTC' }],
    ...(key ? { idempotencyKey: key } : {}),
  });

  it(
    'are written before signing (pending, with the order hashes and key) ' +
      'and replaced by the answer; an unkeyed submission writes nothing',
    async () => {
      const net = wire();
      const bg = withPages(
        startBackground({ browser, dbName: 'outcome-5', kdf: KDF, bounds: BOUNDS, fetchFn: net.fetchFn }),
      );
      await onboardDemo(bg, h, page, { connect: true });
      const token = h.ctx.clob.markets[0]!.tokenIds[0]!;
      const writes: unknown[] = [];
      const db = bg.db();
      const transaction = db.transaction.bind(db);
      // Every record put in the `keyed` store, as written.
      (db as { transaction: unknown }).transaction = (...a: Parameters<typeof db.transaction>) => {
        const tx = transaction(...a);
        if (a[0] === 'keyed' && a[1] === 'readwrite') {
          const store = (tx as unknown as { store: { put: (row: { value: unknown }) => unknown } }).store;
          const put = store.put.bind(store);
          store.put = (row) => (writes.push(structuredClone(row.value)), put(row));
        }
        return tx;
      };
      const plain = bg.page(page).request('clob_postOrders', order(token));
      let [view] = await waitPending(bg);
      bg.registry.decide(view!.id, { approve: true, digest: view!.digest });
      await plain;
      expect(writes).toHaveLength(0);
      const keyed = bg.page(page).request('clob_postOrders', order(token, 'k-flight'));
      [view] = await waitPending(bg);
      bg.registry.decide(view!.id, { approve: true, digest: view!.digest });
      const answer = await keyed;
      await vi.waitFor(() => expect(writes).toHaveLength(2));
      expect(writes[0]).toMatchObject({
        pending: true,
        data: { command: 'postOrders', orderHashes: view!.artifact!.signDigests.join(','), idempotencyKey: 'k-flight' },
      });
      expect(writes[1]).toMatchObject({ answered: { answer } });
      expect(writes[1]).not.toHaveProperty('pending');
      (db as { transaction: unknown }).transaction = transaction;
    },
  );
});
