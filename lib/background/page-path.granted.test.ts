/**
 * A granted order on the page path, from a malicious connected page (two tabs of it), the popup, and a
 * second background over the same database and `storage.session` (a worker restart), with hooks that hold
 * a write. The rules: the daily cap holds across a worker stop, with the grant head lagging its uses by
 * `HEAD_LAG_MS` and a failed head write keeping its held count (a use with no held count is numbered
 * after every stored bucket); revoke, lock, panic and a disconnect that answered stop a signed order still
 * waiting for its journal record; a use whose write fails still counts, and a use store that fails its
 * integrity check covers nothing; caches on the request path (connections, owners, active account, held
 * proxy) follow the vault; the audit entry written after the answer is never lost (the audit journal
 * records the submission before it leaves, the next worker records it as `unknown` and notifies, one
 * notification id per failure); a granted cancel by client order id reaches only orders the grant placed
 * (a coid sent outside a grant is forgotten by every grant of the account, and the forget is written
 * before it resolves). The grant/vault-level side is in lib/grants/ledger.restart.test.ts.
 *
 * Worker stop: a second background is started on the same database; the first one stays in memory (a test
 * cannot kill it), so anything it still has to do after "the stop" is suppressed: its head / bucket flush
 * (`flushHeads`, a timer a stopped worker never runs) or the write it was waiting for (held, then failed).
 */
import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import { generatePrivateKey } from 'viem/accounts';
import type { Harness } from '../../test/kits/sandbox';
import {
  type PagedBackground,
  pageSender,
  sandboxSuite,
  sleep,
  until,
  waitPending,
  VIEM_RETRIES,
  perpsPosts,
  btcOnly,
  connectSite,
  pagePathKit,
  type Notice,
} from '../../test/kits/background';
import { TamperedRecordError } from '../vault/errors';
import { serial, shared } from '../audit/log';
import { grantUseRecords } from '../grants/use-records';

const SITE = 'https://trade.example';
const EVIL = 'https://evil.example';
const page = pageSender(SITE, 3);
const page2 = pageSender(SITE, 5); // a second tab of the same site
const evilPage = pageSender(EVIL, 4);
type Bg = PagedBackground;

let h: Harness;
const started = sandboxSuite((x) => (h = x));
const {
  call,
  owner,
  armed,
  grantOf,
  ready,
  codeOf,
  settle,
  openOrders,
  restart,
  stopFlush,
  holdUseWrites,
  holdJournal,
  countExecutes,
  btcOrder,
  restingBtc,
  iocBtc,
  restingEth,
  approveAll,
  closeAll,
  capOf,
} = pagePathKit({ harness: () => h, started, site: SITE, page, dbPrefix: 'page-path-granted' });

// ------------------------------------------------------------------------------------------------
describe('the daily cap holds across a worker stop inside HEAD_LAG_MS', () => {
  it(
    'two tabs race granted orders, the worker stops before any head is written; the ' +
      'restarted worker counts both and lets exactly one of two racing orders take the last room',
    async () => {
      const { bg, wire, dbName } = await ready();
      await grantOf(bg, await capOf(3.5));
      await until(() => armed(bg));
      stopFlush(bg); // the heads never catch up in this worker
      const before = perpsPosts(wire);
      const [a, b] = await Promise.all([
        settle(bg.page(page).request('perps_sendCommand', await btcOrder())),
        settle(bg.page(page2).request('perps_sendCommand', await btcOrder())),
      ]);
      expect([a.e, b.e]).toEqual([undefined, undefined]);
      expect(perpsPosts(wire) - before).toBe(2);
      const next = await restart(dbName, wire);
      expect(
        ((await call(next, 'grant.list')).result as { uses24h: number }[])[0]?.uses24h,
        'the restarted worker counts the uses above the lagging head',
      ).toBe(2);
      const racing = [
        settle(next.page(page).request('perps_sendCommand', await btcOrder())),
        settle(next.page(page2).request('perps_sendCommand', await btcOrder())),
      ];
      await waitPending(next);
      closeAll(next);
      const out = await Promise.all(racing);
      expect(out.filter((x) => x.e === undefined)).toHaveLength(1);
      expect(perpsPosts(wire) - before, 'three orders of a cap of 3.5').toBe(3);
    },
    30_000,
  );

  it(
    "the worker stops while a granted order's use write is still pending: that order " +
      'was sent (its journal record carries the use), and the restarted worker counts it',
    async () => {
      const { bg, wire, dbName } = await ready();
      await grantOf(bg, await capOf(2.5));
      await until(() => armed(bg));
      const before = perpsPosts(wire);
      await bg.page(page).request('perps_sendCommand', await btcOrder());
      const hold = holdUseWrites(bg);
      const sent = await settle(bg.page(page).request('perps_sendCommand', await btcOrder()));
      expect(sent.e, 'sent once the journal record carrying the use is stored').toBeUndefined();
      expect(hold.held()).toBe(1);
      expect(perpsPosts(wire) - before).toBe(2);
      stopFlush(bg);
      const next = await restart(dbName, wire); // the stopped worker's write never lands
      expect(
        ((await call(next, 'grant.list')).result as { uses24h: number }[])[0]?.uses24h,
        'the use the stopped worker never wrote counts',
      ).toBe(2);
      const over = settle(next.page(page).request('perps_sendCommand', await btcOrder()));
      const [w] = await waitPending(next);
      expect(w?.flags.join(' ')).toMatch(/24 h|daily/i);
      closeAll(next);
      await over;
      hold.release(new Error('the worker is gone'));
      expect(perpsPosts(wire) - before, 'two orders of a cap of 2.5').toBe(2);
    },
    30_000,
  );

  it(
    'uses written before the worker stops are not counted twice by the next ' +
      'worker, whose journal still carries them (their entries were not written yet)',
    async () => {
      const { bg, wire, dbName } = await ready();
      await grantOf(bg, await capOf(3.5));
      await until(() => armed(bg));
      let release!: () => void;
      const busy = new Promise<void>((r) => (release = r));
      void serial(shared(bg.db()), 'tail', () => busy); // the audit entries wait: every journal record stays open
      const before = perpsPosts(wire);
      await bg.page(page).request('perps_sendCommand', await btcOrder());
      await bg.page(page).request('perps_sendCommand', await btcOrder());
      await sleep(50); // both uses are in the vault
      stopFlush(bg);
      const next = await restart(dbName, wire);
      expect(((await call(next, 'grant.list')).result as { uses24h: number }[])[0]?.uses24h, 'each use once').toBe(2);
      expect(
        (await settle(next.page(page).request('perps_sendCommand', await btcOrder()))).e,
        'the third order of 3.5 is covered',
      ).toBeUndefined();
      const over = settle(next.page(page).request('perps_sendCommand', await btcOrder()));
      await waitPending(next);
      closeAll(next);
      await over;
      release();
      expect(perpsPosts(wire) - before).toBe(3);
    },
    30_000,
  );

  it(
    'one transient failure of the head write (the flush) and the worker goes on: the next granted ' +
      'order gets a use number of its own, and after a restart the site stays within its daily cap',
    async () => {
      const { bg, wire, dbName } = await ready();
      await grantOf(bg, await capOf(2.5));
      await until(() => armed(bg));
      const vault = bg.vault() as unknown as { commit: (...a: unknown[]) => Promise<void> };
      const records = grantUseRecords(bg.vault());
      const flushNow = Object.getPrototypeOf(records).flushHeads as () => Promise<void>;
      stopFlush(bg); // the timer's flushes do nothing; this test runs the flush itself, when it chooses
      const before = perpsPosts(wire);
      await bg.page(page).request('perps_sendCommand', await btcOrder()); // use 1: its bucket written, the head lags
      const commit = vault.commit.bind(vault);
      vault.commit = async () => {
        throw new DOMException('The operation failed for reasons unrelated to the database itself', 'UnknownError');
      };
      await flushNow.call(records); // the head write fails once (swallowed: "never throws")
      vault.commit = commit;
      await bg.page(page).request('perps_sendCommand', await btcOrder()); // use 2
      const third = settle(bg.page(page).request('perps_sendCommand', await btcOrder()));
      await waitPending(bg);
      closeAll(bg); // this worker counts right: the third asks
      await third;
      await flushNow.call(records);
      expect(perpsPosts(wire) - before).toBe(2);
      const next = await restart(dbName, wire); // MV3 idles the worker out; the next one reads the grant from the disk
      const uses = ((await call(next, 'grant.list')).result as { uses24h: number }[])[0]?.uses24h;
      const again = settle(next.page(page).request('perps_sendCommand', await btcOrder()));
      await sleep(300);
      closeAll(next);
      await again;
      expect(
        perpsPosts(wire) - before,
        `two granted orders were sent and the restarted worker ` +
          `counts ${uses} use(s): no third is sent (cap 2.5 orders)`,
      ).toBe(2);
    },
    30_000,
  );

  it(
    "popup grant.list and two tabs' orders are the restarted worker's first requests, all at once: " +
      'the unwritten use counts, exactly the room left is used (cap 2.5 orders: one more, not two)',
    async () => {
      const { bg, wire, dbName } = await ready();
      await grantOf(bg, await capOf(2.5));
      await until(() => armed(bg));
      const before = perpsPosts(wire);
      const hold = holdUseWrites(bg);
      expect((await settle(bg.page(page).request('perps_sendCommand', await btcOrder()))).e).toBeUndefined();
      expect(hold.held()).toBe(1);
      stopFlush(bg);
      const next = await restart(dbName, wire);
      const racing = [
        settle(call(next, 'grant.list')),
        settle(next.page(page).request('perps_sendCommand', await btcOrder())),
        settle(next.page(page2).request('perps_sendCommand', await btcOrder())),
      ];
      await waitPending(next).catch(() => undefined);
      closeAll(next);
      await Promise.all(racing);
      hold.release(new Error('the worker is gone'));
      expect(perpsPosts(wire) - before, 'two orders sent on a 2.5-order cap').toBe(2);
    },
    30_000,
  );
});

// ------------------------------------------------------------------------------------------------
describe(
  'revoke, lock, panic while the signed order waits for its ' +
    "journal record (the use's durable note, before the send) stop it",
  () => {
    async function signedAndWaiting() {
      const { bg, wire } = await ready();
      const g = await grantOf(bg);
      await until(() => armed(bg));
      await bg.page(page).request('perps_sendCommand', await btcOrder()); // warm: symbol table and held proxy
      const executes = countExecutes(bg);
      const hold = holdJournal(bg);
      const before = perpsPosts(wire);
      const order = settle(bg.page(page).request('perps_sendCommand', await btcOrder()));
      await until(() => hold.held() > 0 && executes() > 0);
      await sleep(30); // signed; waiting for the held journal record
      return { bg, wire, g, hold, before, order };
    }

    it('a popup revoke while the write is pending: the signature is dropped, nothing sent, -32003', async () => {
      const { bg, wire, g, hold, before, order } = await signedAndWaiting();
      const revoking = call(bg, 'grant.revoke', { id: g.id });
      await sleep(10);
      hold.release();
      expect((await revoking).ok).toBe(true);
      const out = await order;
      expect(perpsPosts(wire) - before, 'nothing is sent after the revoke').toBe(0);
      expect(codeOf(out.e)).toBe(-32003);
    }, 30_000);

    it(
      'a popup lock while the write is pending (the lock ' + 'queues behind the write): nothing sent, no retried code',
      async () => {
        const { bg, wire, hold, before, order } = await signedAndWaiting();
        const locking = call(bg, 'vault.lock');
        await sleep(10);
        hold.release();
        expect((await locking).ok).toBe(true);
        const out = await order;
        expect(perpsPosts(wire) - before, 'nothing is sent after the lock').toBe(0);
        expect(VIEM_RETRIES).not.toContain(codeOf(out.e));
      },
      30_000,
    );

    it('panic while the write is pending: nothing sent (the gate is closed before the send)', async () => {
      const { bg, wire, hold, before, order } = await signedAndWaiting();
      const panicking = call(bg, 'panic.run', { closePositions: false });
      await sleep(10);
      hold.release();
      expect((await panicking).ok).toBe(true);
      await order;
      expect(perpsPosts(wire) - before, 'nothing is sent after panic').toBe(0);
    }, 30_000);

    it(
      'an order-book post under a grant: a popup revoke while its ' +
        'journal record is pending stops it before the post (nothing posted)',
      async () => {
        const { bg, wire } = await ready();
        const token = h.ctx.clob.markets[0]!.tokenIds[0]!;
        const g = await bg.grants().create({
          origin: SITE,
          account: owner(),
          limits: {
            venue: 'clob',
            markets: [token],
            allow: { order: true },
            maxNotional: '100',
            dailyNotional: '1000',
            priceBandPct: '2',
          } as never,
          durationMs: 3_600_000,
        });
        await until(() => armed(bg, 'clob'));
        const mid = Number(await bg.reads().clobMid(token));
        const params = {
          orders: [
            {
              tokenId: token,
              side: 'BUY',
              price: (Math.floor(mid * 100) / 100).toFixed(2),
              size: '10',
              orderType: 'GTC',
            },
          ],
        };
        const clobPosts = () => wire.sent.filter((x) => x.method === 'POST' && /\/clob\/orders?$/.test(x.url)).length;
        const first = await settle(bg.page(page).request('clob_postOrders', params));
        expect(first.e, 'the order is covered').toBeUndefined();
        expect(bg.registry.size).toBe(0);
        const hold = holdJournal(bg);
        const before = clobPosts();
        const order = settle(bg.page(page).request('clob_postOrders', params));
        await until(() => hold.held() > 0);
        const revoking = call(bg, 'grant.revoke', { id: g.id });
        await sleep(10);
        hold.release();
        expect((await revoking).ok).toBe(true);
        const out = await order;
        expect(clobPosts() - before, 'nothing is posted after the revoke').toBe(0);
        expect(codeOf(out.e)).toBe(-32003);
      },
      30_000,
    );

    it(
      "the site's second tab disconnects (wallet_revokePermissions) " +
        "while the first tab's order waits for its write: nothing sent",
      async () => {
        const { bg, wire, hold, before, order } = await signedAndWaiting();
        const revoking = settle(bg.page(page2).request('wallet_revokePermissions', [{ eth_accounts: {} }]));
        await sleep(10);
        hold.release();
        await revoking;
        await order;
        expect(perpsPosts(wire) - before, 'nothing is sent after the disconnect').toBe(0);
        // The connection held in memory went with it: the next request is refused, no window.
        expect(codeOf((await settle(bg.page(page).request('perps_sendCommand', await btcOrder()))).e)).toBe(4100);
        expect(bg.registry.size).toBe(0);
      },
      30_000,
    );
  },
);

// ------------------------------------------------------------------------------------------------
describe('a use whose write fails still counts, and a store that fails its check covers nothing', () => {
  it(
    'a storage error on the use write (after its checks): the order is sent, and its ' +
      'use counts — in this worker after the grants are read again, and in the next one',
    async () => {
      const { bg, wire, dbName } = await ready();
      await grantOf(bg, await capOf(1.5));
      await until(() => armed(bg));
      const hold = holdUseWrites(bg);
      const before = perpsPosts(wire);
      const order = settle(bg.page(page).request('perps_sendCommand', await btcOrder()));
      await until(() => hold.held() > 0);
      hold.release(new DOMException('The transaction was aborted', 'AbortError'));
      expect((await order).e).toBeUndefined();
      expect(perpsPosts(wire) - before).toBe(1);
      bg.grants().reload(); // the grants read from the vault again (as after a lock and unlock)
      const again = settle(bg.page(page).request('perps_sendCommand', await btcOrder()));
      expect((await waitPending(bg))[0]?.flags.join(' ')).toMatch(/24 h|daily/i);
      closeAll(bg);
      await again;
      stopFlush(bg);
      const next = await restart(dbName, wire);
      expect(
        ((await call(next, 'grant.list')).result as { uses24h: number }[])[0]?.uses24h,
        'the unwritten use, from the journal',
      ).toBe(1);
      expect(perpsPosts(wire) - before).toBe(1);
    },
    30_000,
  );

  it(
    "the use store fails its integrity check at the use's read (a new minute's bucket that " +
      'does not open): the order asks (flagged) and nothing leaves before the person approves',
    async () => {
      const { bg, wire } = await ready();
      await grantOf(bg);
      await until(() => armed(bg));
      const v = grantUseRecords(bg.vault()) as unknown as {
        useHeads: Map<string, unknown>;
        readBucket: (...a: unknown[]) => Promise<unknown>;
      };
      v.useHeads.clear(); // no held bucket: the use's write reads what is stored first
      const real = v.readBucket.bind(v);
      v.readBucket = async () => {
        throw new TamperedRecordError();
      };
      const before = perpsPosts(wire);
      const order = settle(bg.page(page).request('perps_sendCommand', await btcOrder()));
      const [w] = await waitPending(bg);
      v.readBucket = real;
      expect(w?.flags.join(' ')).toMatch(/integrity|tamper|changed|check/i);
      expect(perpsPosts(wire) - before).toBe(0);
      closeAll(bg);
      expect(codeOf((await order).e)).toBe(4001);
      expect(perpsPosts(wire) - before).toBe(0);
    },
    30_000,
  );
});

// ------------------------------------------------------------------------------------------------
describe('caches on the request path follow the vault', () => {
  it(
    'an account switch in the popup: the held active account and connection serve the site ' +
      'nothing (4100, no window, nothing sent), before and after a granted order warmed them',
    async () => {
      const { bg, wire } = await ready();
      await grantOf(bg);
      await until(() => armed(bg));
      await bg.page(page).request('perps_sendCommand', await btcOrder());
      const second = (
        (await call(bg, 'vault.importOwnerKey', { privateKey: generatePrivateKey(), label: 'two' })).result as {
          address: string;
        }
      ).address;
      expect((await call(bg, 'account.select', { address: second })).ok).toBe(true);
      const before = perpsPosts(wire);
      const out = await Promise.all([
        settle(bg.page(page).request('perps_sendCommand', await btcOrder())),
        settle(bg.page(page2).request('perps_sendCommand', await btcOrder())),
      ]);
      expect(out.map((x) => codeOf(x.e))).toEqual([4100, 4100]);
      expect(await bg.page(page).request('eth_accounts')).toEqual([]);
      expect(bg.registry.size).toBe(0);
      expect(perpsPosts(wire) - before).toBe(0);
      // And back: the held values follow the switch again.
      await call(bg, 'account.select', { address: owner() });
      expect(await bg.page(page).request('eth_accounts')).toEqual([owner()]);
    },
    30_000,
  );

  it(
    "the proxy record deleted (the popup's proxy.delete) between two " +
      'granted orders: the held proxy does not sign the second (nothing sent)',
    async () => {
      const { bg, wire } = await ready();
      await grantOf(bg);
      await until(() => armed(bg));
      await bg.page(page).request('perps_sendCommand', await btcOrder()); // the proxy is held in memory now
      // What `proxy.delete` does once the venue answered (the venue's own DeleteProxy is left out: the sandbox's
      // demo proxy is shared by every test of this file).
      await bg.vault().deleteProxy(h.demo.proxy.address);
      const before = perpsPosts(wire);
      const out = settle(bg.page(page).request('perps_sendCommand', await btcOrder()));
      await sleep(200);
      closeAll(bg);
      expect((await out).e).toBeDefined();
      expect(perpsPosts(wire) - before).toBe(0);
    },
    30_000,
  );

  it(
    'a backup restored over the vault (taken before the proxy existed): the held ' +
      "proxy and owner list are not served — the site's next order signs nothing",
    async () => {
      const { bg, wire } = await ready({ onboard: false });
      await call(bg, 'vault.create', { password: 'a good password' });
      await call(bg, 'settings.set', {
        perpsUrl: h.perps,
        clobUrl: h.clobUrl,
        gammaUrl: `${h.url}/gamma`,
        dataUrl: `${h.url}/data`,
      });
      await call(bg, 'vault.importOwnerKey', { privateKey: h.demo.owner.privateKey });
      const backup = ((await call(bg, 'vault.exportBackup')).result as { backup: string }).backup;
      await call(bg, 'proxy.import', {
        account: owner(),
        privateKey: h.demo.proxy.privateKey,
        proxy: h.demo.proxy.address,
        secret: h.demo.proxy.secret,
        expiry: h.demo.proxy.expiry,
      });
      await connectSite(bg, page);
      await grantOf(bg);
      await until(() => armed(bg));
      await bg.page(page).request('perps_sendCommand', await btcOrder()); // proxy and owners held in memory
      const restored = await call(bg, 'vault.restoreBackup', { backup, password: 'a good password' });
      expect(restored.ok, JSON.stringify(restored)).toBe(true);
      expect(((await call(bg, 'proxy.list', {})).result as unknown[]).length).toBe(0);
      const before = perpsPosts(wire);
      const out = settle(bg.page(page).request('perps_sendCommand', await btcOrder()));
      await sleep(300);
      approveAll(bg); // even approved, there is no proxy in the restored vault to sign with
      const r = await out;
      expect(
        r.e,
        `the restored vault has no proxy: the order is not answered (got ${JSON.stringify(r.r)})`,
      ).toBeDefined();
      expect(perpsPosts(wire) - before).toBe(0);
    },
    30_000,
  );
});

// ------------------------------------------------------------------------------------------------
describe('the audit entry written after the answer is never lost', () => {
  const createOrders = async (bg: Bg) =>
    ((await call(bg, 'audit.list', { kind: 'perps.createOrders', limit: 100 })).result as
      { result: string; origin: string }[] | undefined) ?? [];

  it('a lock right after the granted answer: the entry is in the log (read after unlocking)', async () => {
    const { bg } = await ready();
    await grantOf(bg);
    await until(() => armed(bg));
    const before = (await createOrders(bg)).length;
    await bg.page(page).request('perps_sendCommand', await btcOrder());
    await call(bg, 'vault.lock'); // as the answer arrives at the page
    await call(bg, 'vault.unlock', { password: 'a good password' });
    const after = await createOrders(bg);
    expect(after.length - before).toBe(1);
    expect(after[0]).toMatchObject({ result: 'ok', origin: SITE });
  }, 30_000);

  it(
    'the audit store refusing the entry after a granted answer: the page has ' +
      "the venue's answer (no error a client retries) and the person is notified",
    async () => {
      const { bg, wire, notices } = await ready();
      await grantOf(bg);
      await until(() => armed(bg));
      const vault = bg.vault() as unknown as { auditKey: () => unknown };
      const real = vault.auditKey.bind(vault);
      let failing = false;
      vault.auditKey = () =>
        failing ? Promise.reject(new DOMException('QuotaExceededError', 'QuotaExceededError')) : real();
      wire.replaceAnswer = (url, method) => {
        if (method === 'POST' && /\/perps\/v1\/trade\/orders$/.test(url)) failing = true;
        return undefined;
      };
      const out = await settle(bg.page(page).request('perps_sendCommand', await btcOrder()));
      wire.replaceAnswer = undefined;
      await until(() => notices.some((x) => x.title === 'Not in the audit log'));
      vault.auditKey = real;
      expect(out.e).toBeUndefined();
      expect(out.r).toMatchObject([{ status: 'ok' }]);
    },
    30_000,
  );

  it(
    'a popup audit read that starts as the answer reaches ' + 'the page waits for the entry queued behind a busy queue',
    async () => {
      const { bg } = await ready();
      await grantOf(bg);
      await until(() => armed(bg));
      const before = (await createOrders(bg)).length;
      let release!: () => void;
      const busy = new Promise<void>((r) => (release = r));
      void serial(shared(bg.db()), 'tail', () => busy);
      await bg.page(page).request('perps_sendCommand', await btcOrder());
      const reading = createOrders(bg); // queued appends first (`auditWritten`)
      await sleep(20);
      release();
      expect((await reading).length - before).toBe(1);
    },
    30_000,
  );

  it(
    'two granted orders whose audit entries both fail within the same millisecond ' +
      'raise two notification ids: the person is told of each unrecorded order',
    async () => {
      let pinned: number | undefined;
      const { bg, wire, notices } = await ready({ now: () => pinned ?? Date.now() });
      await grantOf(bg);
      await until(() => armed(bg));
      // The audit queue is busy while both answers arrive; then the store refuses both entries, one right after the
      // other.
      let release!: () => void;
      const busy = new Promise<void>((r) => (release = r));
      void serial(shared(bg.db()), 'tail', () => busy);
      const vault = bg.vault() as unknown as { auditKey: () => unknown };
      const real = vault.auditKey.bind(vault);
      let failing = false;
      // A thenable that rejects when the queue awaits it (a rejected promise held in a busy queue would be reported as
      // unhandled).
      const refused = {
        then: (_ok: unknown, fail: (e: unknown) => void) =>
          fail(new DOMException('QuotaExceededError', 'QuotaExceededError')),
      };
      vault.auditKey = () => (failing ? refused : real());
      wire.replaceAnswer = (url, method) => {
        if (method === 'POST' && /\/perps\/v1\/trade\/orders$/.test(url)) failing = true;
        return undefined;
      };
      const before = perpsPosts(wire);
      const answers = await Promise.all([
        settle(bg.page(page).request('perps_sendCommand', await btcOrder())),
        settle(bg.page(page2).request('perps_sendCommand', await btcOrder())),
      ]);
      wire.replaceAnswer = undefined;
      expect(answers.map((a) => a.e)).toEqual([undefined, undefined]);
      expect(perpsPosts(wire) - before).toBe(2);
      pinned = Date.now(); // both failures land within one millisecond (the clock seam makes it certain)
      release();
      await until(() => notices.filter((x) => x.title === 'Not in the audit log').length >= 2);
      pinned = undefined;
      vault.auditKey = real;
      const ids = new Set(notices.filter((x) => x.title === 'Not in the audit log').map((x) => x.id));
      expect(
        ids.size,
        `two accepted orders have no audit entry: their notifications need two ids (got ` +
          `${[...ids].join(', ')}), or chrome.notifications.create replaces the first with the second`,
      ).toBe(2);
    },
    30_000,
  );

  it(
    'a worker stop after the answer went back and before its queued audit ' +
      'entry was written: the accepted order is in the log or in a notification',
    async () => {
      const { bg, wire, dbName, notices } = await ready();
      await grantOf(bg);
      await until(() => armed(bg));
      await bg.page(page).request('perps_sendCommand', await btcOrder()); // a first granted order, recorded normally
      expect(await createOrders(bg)).toHaveLength(1);
      // The audit queue of this worker is busy (an earlier entry still being written) when the next order's answer
      // arrives.
      let release!: () => void;
      const busy = new Promise<void>((r) => (release = r));
      void serial(shared(bg.db()), 'tail', () => busy);
      const before = perpsPosts(wire);
      const answer = await bg.page(page).request('perps_sendCommand', await btcOrder());
      expect(answer, "the page has the venue's answer").toMatchObject([{ status: 'ok' }]);
      expect(perpsPosts(wire) - before).toBe(1);
      // The worker stops now (its queue never runs again); the next one starts on the same profile. The
      // journal record stored before the send is what lets the next worker tell the person.
      stopFlush(bg);
      const later: Notice[] = [];
      const next = await restart(dbName, wire, later);
      const entries = await createOrders(next);
      const told = [...notices, ...later].some((x) => x.title === 'Not in the audit log');
      release(); // test cleanup only: a stopped worker would never write it
      expect(entries.length, 'the restarted worker reads the log (the first order is there)').toBeGreaterThanOrEqual(1);
      expect(
        entries.length >= 2 || told,
        `the second granted order was accepted by the venue and answered to the page: ` +
          `the log holds ${entries.length} createOrders entry, so a notification is due`,
      ).toBe(true);
    },
    30_000,
  );
});

// ------------------------------------------------------------------------------------------------
describe('a granted cancel by client order id reaches only orders the grant placed', () => {
  const cancelByCoid = (c: string) => ({ op: { type: 'cancelOrdersCOID', args: [c] } });
  /**
   * Waits until `origin`'s grant has recorded an order with client order id `coid` (the grant owns it; its head may
   * still lag).
   */
  const owns = (bg: Bg, coid: string, origin = SITE) =>
    until(async () =>
      (await grantUseRecords(bg.vault()).listGrants()).some(
        (g) => g.grant.origin === origin && g.uses.some((u) => u.orders?.some((o) => o.coid === coid)),
      ),
    );
  /**
   * The site's cancel by `coid` on `bg`, any window it opens closed after 300 ms: how many windows it opened
   * (`asked`), its outcome (`e` set when refused), and whether order `oid` is still open after it.
   */
  async function cancelByCoidOn(bg: Bg, coid: string, oid: number) {
    const cancel = settle(bg.page(page).request('perps_sendCommand', cancelByCoid(coid)));
    await sleep(300);
    const asked = bg.registry.size;
    closeAll(bg);
    const outcome = await cancel;
    return { asked, outcome, open: openOrders().some((o) => o.oid === oid) };
  }

  it(
    'a coid the grant stopped owning when the site sent it outside the grant (approved in a window) is ' +
      "not owned again after a worker stop inside HEAD_LAG_MS: the restarted worker's cancel by it asks",
    async () => {
      const { bg, wire, dbName } = await ready();
      await grantOf(bg);
      await until(() => armed(bg));
      const coid = 'ab'.repeat(16);
      // Under the grant: a taker order with client order id `coid` (filled at once: the id is free again at the venue).
      await bg.page(page).request('perps_sendCommand', await iocBtc(coid));
      await owns(bg, coid);
      // the grant owns `coid` on disk
      await (grantUseRecords(bg.vault()) as unknown as { flushHeads: () => Promise<void> }).flushHeads();
      stopFlush(bg); // from here this worker is about to stop: no flush
      // Outside the grant (ETH): the site reuses `coid`; the grant forgets it before the window; the person approves.
      const eth = bg.page(page).request('perps_sendCommand', await restingEth(coid));
      await waitPending(bg);
      approveAll(bg);
      const [ack] = (await eth) as { oid: number }[];
      expect(openOrders().some((o) => o.oid === ack!.oid)).toBe(true);
      // This worker: the grant no longer owns `coid` (the cancel would ask). It stops within HEAD_LAG_MS of the
      // forget (the approval here is immediate; a person is slower than 500 ms, so in practice this needs the flush's
      // write to fail — it is swallowed and not retried — before a later stop).
      const next = await restart(dbName, wire);
      const { asked, open } = await cancelByCoidOn(next, coid, ack!.oid);
      expect(
        open && asked === 1,
        `the restarted worker asks for cancelOrdersCOID(${coid}) (windows: ${asked}); the ETH order ` +
          `the person approved outside the grant stays open (it is ${open ? 'still open' : 'cancelled'})`,
      ).toBe(true);
    },
    30_000,
  );

  it(
    'orders recorded on the held bucket and lost with a worker ' +
      'stop: the granted cancel of them asks (deny by default)',
    async () => {
      const { bg, wire, dbName } = await ready();
      await grantOf(bg);
      await until(() => armed(bg));
      stopFlush(bg);
      const coid = 'cd'.repeat(16);
      const [ack] = (await bg.page(page).request('perps_sendCommand', await restingBtc(coid))) as { oid: number }[];
      expect(openOrders().some((o) => o.oid === ack!.oid)).toBe(true);
      await until(async () =>
        ((await grantUseRecords(bg.vault()).listGrants())[0]?.uses ?? []).some((u) => u.orders?.length),
      ); // recorded in memory, not written
      const next = await restart(dbName, wire);
      const cancel = settle(next.page(page).request('perps_sendCommand', cancelByCoid(coid)));
      const [w] = await waitPending(next);
      expect(w?.origin).toBe(SITE);
      closeAll(next);
      expect(codeOf((await cancel).e)).toBe(4001);
      expect(openOrders().some((o) => o.oid === ack!.oid)).toBe(true);
    },
    30_000,
  );

  it(
    "a coid SITE's grant owns, put on an order another connected " +
      "site had approved in a window: SITE's cancel by it asks",
    async () => {
      const { bg } = await ready();
      await connectSite(bg, evilPage);
      await grantOf(bg);
      await until(() => armed(bg));
      const coid = 'ef'.repeat(16);
      // SITE's grant owns `coid` (filled: free again)
      await bg.page(page).request('perps_sendCommand', await iocBtc(coid));
      await owns(bg, coid);
      // The colluding second site sends an order with the same client order id; the person approves it in its window.
      const other = bg.page(evilPage).request('perps_sendCommand', await restingEth(coid));
      await waitPending(bg);
      approveAll(bg);
      const [ack] = (await other) as { oid: number }[];
      const { asked, open } = await cancelByCoidOn(bg, coid, ack!.oid);
      expect(
        open && asked === 1,
        `${SITE}'s grant does not cover the cancel (windows: ${asked}; the ` +
          `order is ${open ? 'still open' : 'cancelled'}) of the order the person ` +
          `approved for ${EVIL}, by a client order id the grant once owned`,
      ).toBe(true);
    },
    30_000,
  );

  it(
    "a coid SITE's grant owns, put on a resting order EVIL places under ITS OWN grant (no " +
      "window): SITE's cancel by that coid asks (every other grant of the account forgets it)",
    async () => {
      const { bg } = await ready();
      await connectSite(bg, evilPage);
      await grantOf(bg);
      await grantOf(bg, btcOnly, EVIL);
      await until(() => armed(bg));
      const coid = '12'.repeat(16);
      // SITE's grant owns `coid` (filled: free again)
      await bg.page(page).request('perps_sendCommand', await iocBtc(coid));
      await owns(bg, coid);
      // granted for EVIL: no window
      const [ack] = (await bg.page(evilPage).request('perps_sendCommand', await restingBtc(coid))) as { oid: number }[];
      expect(openOrders().some((o) => o.oid === ack!.oid)).toBe(true);
      const { asked, open } = await cancelByCoidOn(bg, coid, ack!.oid);
      expect(
        open && asked === 1,
        `${SITE}'s grant does not cover cancelOrdersCOID (windows: ${asked}); the ` +
          `order ${EVIL}'s grant placed stays open (it is ${open ? 'open' : 'cancelled'})`,
      ).toBe(true);
    },
    30_000,
  );

  it(
    "EVIL (connected, no grant) sends SITE's owned coid on an order the person rejects: SITE's coid " +
      'cancel then asks (lost ownership is deny-by-default), and its cancel by order id stays covered',
    async () => {
      const { bg } = await ready();
      await connectSite(bg, evilPage);
      await grantOf(bg);
      await until(() => armed(bg));
      const coid = '34'.repeat(16);
      const [mine] = (await bg.page(page).request('perps_sendCommand', await restingBtc(coid))) as { oid: number }[];
      await owns(bg, coid);
      const evil = settle(bg.page(evilPage).request('perps_sendCommand', await restingEth(coid)));
      await waitPending(bg);
      closeAll(bg);
      await evil;
      const byCoid = await cancelByCoidOn(bg, coid, mine!.oid);
      expect(byCoid.outcome.e).toBeDefined();
      expect(byCoid.asked).toBe(1);
      expect(byCoid.open).toBe(true);
      await bg.page(page).request('perps_sendCommand', { op: { type: 'cancelOrders', args: [mine!.oid] } });
      expect(bg.registry.size).toBe(0);
      expect(openOrders().some((o) => o.oid === mine!.oid)).toBe(false);
    },
    30_000,
  );
});
