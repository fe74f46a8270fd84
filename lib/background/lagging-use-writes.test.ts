/**
 * Granted orders whose use writes lag or fail (a granted submission leaves once its use is counted and
 * its journal record carrying the use is stored; the vault write runs in a later background task): the
 * use still counts across a worker stop, in a trading session and on the order-book path; a lock right
 * after an answer keeps its audit entry (or tells the person); answered orders leave no journal record
 * behind; records carrying a grant use stop at `MAX_OPEN_GRANTED` (400) of the journal's 500, so the
 * person's own approved order is never refused by a site's burst; and every lock path (`Locks.lock`, the
 * popup's `vault.lock`, panic) and a revoke stop the granted orders queued behind a lagging write (the
 * grants are revoked at the call, before the vault's lock waits its turn). Setup: `pagePathKit`.
 *
 * No granted order's key read waits for its own use's vault write: the proxy key in a trading session,
 * the owner key and API credentials on the order-book path are answered from the keys the vault holds
 * (`lib/vault/held-keys.ts`), so the order is sent while its write is still held.
 */
import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import { fakeBrowser } from 'wxt/testing/fake-browser';
import type { Harness } from '../../test/kits/sandbox';
import { AUTOLOCK_ALARM } from './index';
import {
  pageSender,
  sandboxSuite,
  until,
  waitPending,
  perpsPosts,
  pagePathKit,
  browser,
  sleep,
  type PagedBackground,
} from '../../test/kits/background';

const SITE = 'https://trade.example';
const page = pageSender(SITE, 3);
const page2 = pageSender(SITE, 5);

let h: Harness;
const started = sandboxSuite((x) => (h = x));
const {
  call,
  armed,
  grantOf,
  ready,
  settle,
  restart,
  stopFlush,
  holdUseWrites,
  btcOrder,
  closeAll,
  capOf,
  owner,
  restingEth,
  approveAll,
} = pagePathKit({ harness: () => h, started, site: SITE, page, dbPrefix: 'lagging-use-writes' });

const state = async (bg: Parameters<typeof call>[0]) =>
  ((await call(bg, 'vault.status')).result as { state: string }).state;
const autoLock = async (bg: Parameters<typeof call>[0]) => {
  await fakeBrowser.alarms.onAlarm.trigger({ name: AUTOLOCK_ALARM, scheduledTime: Date.now() } as Parameters<
    typeof fakeBrowser.alarms.onAlarm.trigger
  >[0]);
  await until(async () => (await state(bg)) !== 'unlocked');
  return state(bg);
};
const restingEthOrder = async () => {
  const o = (await restingEth('x')) as { op: { args: Record<string, unknown>[] } };
  delete o.op.args[0]!.c;
  return o;
};
/** The journal records `bg`'s database holds (the vault database's `journal` store), by id. */
const journalRaw = async (bg: PagedBackground) =>
  Object.fromEntries(
    (await bg.db().getAll('journal')).map((r) => [r.id, r.record as { use?: unknown; audited?: boolean }]),
  );

/**
 * A worker in a trading session ('session', after the auto-lock) with a grant of 2.5 BTC orders a day, whose
 * first granted order is sent from the page with its use write held: `first` is that order's outcome, `hold` the held
 * write, `before` the count of perps posts before it.
 */
async function sessionWithHeldUse() {
  const { bg, wire, dbName } = await ready();
  await grantOf(bg, await capOf(2.5));
  await until(() => armed(bg));
  expect(await autoLock(bg)).toBe('session');
  const before = perpsPosts(wire);
  const hold = holdUseWrites(bg);
  const first = settle(bg.page(page).request('perps_sendCommand', await btcOrder()));
  await until(() => hold.held() > 0);
  return { bg, wire, dbName, before, hold, first };
}

describe("a stopped worker's unwritten use counts in a trading session", () => {
  it(
    'in a trading session a granted order is sent while its use write is held, the ' +
      'write then fails (the use is in its journal record only), the worker stops; the next ' +
      'worker restores the session and its two tabs get one more order, not two (cap 2.5)',
    async () => {
      // The kept proxy key is answered from memory: the order is sent while its use write is held. Then the
      // write fails (a storage error): the use lives on in the journal only.
      const { bg, wire, dbName, before, hold, first } = await sessionWithHeldUse();
      await until(() => perpsPosts(wire) - before > 0, 300).catch(() => undefined);
      expect(perpsPosts(wire) - before, 'in a trading session the order is sent while its use write is held').toBe(1);
      hold.release(new Error('disk full'));
      expect((await first).e).toBeUndefined();
      expect(perpsPosts(wire) - before).toBe(1);
      stopFlush(bg);
      const next = await restart(dbName, wire);
      expect(await state(next)).toBe('session');
      const racing = [
        settle(next.page(page).request('perps_sendCommand', await btcOrder())),
        settle(next.page(page2).request('perps_sendCommand', await btcOrder())),
      ];
      await waitPending(next).catch(() => undefined);
      closeAll(next);
      await Promise.all(racing);
      expect(perpsPosts(wire) - before, 'orders sent on a 2.5-order cap across a session restart').toBe(2);
    },
    40_000,
  );

  it(
    "the leftover is merged in 'session' state, then the person unlocks (buckets re-sealed " +
      'with the master key): still counted, no tamper (a third order is refused, a window asks)',
    async () => {
      const { bg, wire, dbName, before, hold, first } = await sessionWithHeldUse();
      hold.release(new Error('disk full'));
      expect((await first).e).toBeUndefined();
      stopFlush(bg);
      const next = await restart(dbName, wire);
      expect(await state(next)).toBe('session');
      expect((await call(next, 'grant.list')).ok).toBe(true); // leftover merged while in 'session'
      await sleep(50);
      expect((await call(next, 'vault.unlock', { password: 'a good password' })).ok).toBe(true);
      const list = (await call(next, 'grant.list')).result as { uses24h: number }[];
      expect(list).toHaveLength(1);
      expect(list[0]!.uses24h, "the stopped worker's use still counts after unlock").toBe(1);
      expect((await settle(next.page(page).request('perps_sendCommand', await btcOrder()))).e).toBeUndefined();
      const third = settle(next.page(page).request('perps_sendCommand', await btcOrder()));
      await waitPending(next).catch(() => undefined);
      closeAll(next);
      await third;
      expect(perpsPosts(wire) - before).toBe(2);
    },
    40_000,
  );
});

describe('the order-book path counts an unwritten use across a worker stop', () => {
  it(
    'clob_postOrders under a grant (cap 2.5 orders) whose use write fails (the use is in the ' +
      "journal only), the worker stops; the next worker's two posts: one goes, the other asks",
    async () => {
      const { bg, wire, dbName } = await ready();
      const token = h.ctx.clob.markets[0]!.tokenIds[0]!;
      const mid = Number(await bg.reads().clobMid(token));
      const price = (Math.floor(mid * 100) / 100).toFixed(2);
      const one = Number(price) * 10;
      await bg.grants().create({
        origin: SITE,
        account: owner(),
        limits: {
          venue: 'clob',
          markets: [token],
          allow: { order: true },
          maxNotional: '100',
          dailyNotional: (one * 2.5).toFixed(2),
          priceBandPct: '2',
        } as never,
        durationMs: 3_600_000,
      });
      await until(() => armed(bg, 'clob'));
      const params = { orders: [{ tokenId: token, side: 'BUY', price, size: '10', orderType: 'GTC' }] };
      const clobPosts = () => wire.sent.filter((x) => x.method === 'POST' && /\/clob\/orders?$/.test(x.url)).length;
      const before = clobPosts();
      const hold = holdUseWrites(bg);
      const first = settle(bg.page(page).request('clob_postOrders', params));
      await until(() => hold.held() > 0);
      await until(() => clobPosts() - before > 0, 300).catch(() => undefined);
      // the owner key and API credentials are answered from memory, not behind the use write
      const sentWhileHeld = clobPosts() - before;
      hold.release(new Error('disk full')); // the write fails: the use lives on in the journal record only
      expect((await first).e).toBeUndefined();
      expect(sentWhileHeld, 'the granted post is sent while its use write is held').toBe(1);
      expect(clobPosts() - before).toBe(1);
      stopFlush(bg);
      const { bg: next } = await ready({ dbName, onboard: false, wire });
      await until(() => armed(next, 'clob'), 3000);
      const racing = [
        settle(next.page(page).request('clob_postOrders', params)),
        settle(next.page(page2).request('clob_postOrders', params)),
      ];
      await waitPending(next).catch(() => undefined);
      closeAll(next);
      await Promise.all(racing);
      expect(clobPosts() - before, 'posts on a 2.5-order cap across a restart').toBe(2);
    },
    40_000,
  );
});

describe('a lock between the answer and its deferred audit entry keeps the entry', () => {
  it(
    "the site's granted order is answered and the person locks in the same " +
      'task: after unlock the order is in the audit log (or the person was told)',
    async () => {
      const { bg, notices } = await ready();
      await grantOf(bg, await capOf(10));
      await until(() => armed(bg));
      let locking: Promise<unknown> | undefined;
      const out = await bg
        .page(page)
        .request('perps_sendCommand', await btcOrder())
        .then((r) => {
          locking = call(bg, 'vault.lock');
          return r;
        });
      expect(out).toBeDefined();
      await locking;
      await sleep(100);
      expect((await call(bg, 'vault.unlock', { password: 'a good password' })).ok).toBe(true);
      await sleep(100);
      const entries =
        ((await call(bg, 'audit.list', { kind: 'perps.createOrders', limit: 100 })).result as
          { result: string; origin: string }[] | undefined) ?? [];
      const told = notices.some((x) => x.title === 'Not in the audit log');
      expect(
        entries.filter((e) => e.origin === SITE && e.result === 'ok').length + (told ? 1 : 0),
      ).toBeGreaterThanOrEqual(1);
    },
    40_000,
  );
});

describe('answered granted orders leave no journal record', () => {
  it(
    '20 granted orders from two tabs at once, all answered: once their ' +
      'writes land, the journal keeps no record (nothing piles toward MAX_OPEN)',
    async () => {
      const { bg, wire } = await ready();
      await grantOf(bg, { ...(await capOf(100)) } as object);
      await until(() => armed(bg));
      const before = perpsPosts(wire);
      const outs = await Promise.all(
        Array.from({ length: 20 }, async (_, i) =>
          settle((i % 2 ? bg.page(page2) : bg.page(page)).request('perps_sendCommand', await btcOrder())),
        ),
      );
      const sent = perpsPosts(wire) - before;
      await waitPending(bg).catch(() => undefined);
      closeAll(bg);
      await sleep(300);
      expect(sent).toBeGreaterThan(0);
      expect(outs.filter((o) => !o.e).length).toBe(sent);
      expect(Object.keys(await journalRaw(bg)), 'records left in the journal').toHaveLength(0);
      const g = (bg.grants() as unknown as { ledger: { unstored: Set<unknown> } }).ledger;
      expect(g.unstored.size).toBe(0);
    },
    40_000,
  );
});

describe(
  'a burst of granted orders while the use writes lag (background ' +
    'tasks starved) leaves room in the journal for the person',
  () => {
    it(
      'the site bursts 510 tiny granted orders (within its caps; no rate limit on the grant) ' +
        "while the vault's background-priority use writes lag (held here, as a starved " +
        "`backgroundTask`): records carrying a use stop at 400 of the journal's 500, and the " +
        'out-of-grant order the person then approves in a window is not refused with JournalError',
      async () => {
        const { bg, wire } = await ready();
        await grantOf(bg, { ...(await capOf(1000)) } as object);
        await until(() => armed(bg));
        // the first use's write lags (a background-priority task starved while the worker is busy)
        const hold = holdUseWrites(bg);
        const before = perpsPosts(wire);
        const o = await btcOrder('0.001');
        const burst = Array.from({ length: 510 }, () => settle(bg.page(page2).request('perps_sendCommand', o)));
        for (let i = 0; i < 60 && Object.keys(await journalRaw(bg)).length < 400; i++) await sleep(250);
        const open = Object.keys(await journalRaw(bg)).length;
        const sentMeanwhile = perpsPosts(wire) - before;
        // The person's own order, approved in a window (ETH is outside the BTC-only grant).
        const mine = settle(bg.page(page).request('perps_sendCommand', await restingEthOrder()));
        await until(() => bg.registry.size > 0, 5_000);
        approveAll(bg);
        const early = await Promise.race([mine, sleep(5_000).then(() => undefined)]);
        hold.release();
        const out = early ?? (await mine);
        await Promise.all(burst);
        // The burst spent the sandbox account's rate budget: the next tests of this file start with a fresh one.
        for (const w of [h.ctx.perpsRequestWeight, h.ctx.perpsActionWeight])
          (w as unknown as { log: Map<string, unknown> }).log.clear();
        expect(open, "journal records the site's burst held open").toBeLessThanOrEqual(400);
        expect(
          sentMeanwhile,
          'the burst sends are serialised behind the lagging write (counted waits for it)',
        ).toBeLessThanOrEqual(1);
        expect((out.e as { message?: string } | undefined)?.message, "the person's approved order").toBeUndefined();
      },
      60_000,
    );
  },
);

describe('revoke and lock stop granted orders queued behind a lagging use write', () => {
  for (const how of ['revoke', 'lock'] as const) {
    it(
      `6 granted orders from two tabs, signed, wait (their \`counted\` queued in the vault's ` +
        `chain behind a lagging use write); the person ` +
        (how === 'revoke'
          ? 'revokes the grant; '
          : 'locks (popup vault.lock: the grants are revoked at the call, before the vault lock waits its turn); ') +
        `once the write goes on, none of the waiting ones is sent`,
      async () => {
        const { bg, wire } = await ready();
        const g = await grantOf(bg, await capOf(100));
        await until(() => armed(bg));
        const hold = holdUseWrites(bg);
        const before = perpsPosts(wire);
        const o = await btcOrder('0.001');
        const burst = Array.from({ length: 6 }, (_, i) =>
          settle((i % 2 ? bg.page(page2) : bg.page(page)).request('perps_sendCommand', o)),
        );
        await until(() => hold.held() > 0);
        await sleep(200);
        const sentBefore = perpsPosts(wire) - before;
        const acting = how === 'revoke' ? call(bg, 'grant.revoke', { id: g.id }) : call(bg, 'vault.lock');
        await sleep(20);
        hold.release();
        expect((await acting).ok).toBe(true);
        await Promise.all(burst);
        await sleep(100);
        expect(perpsPosts(wire) - before, `sent after the ${how}`).toBe(sentBefore);
      },
      30_000,
    );
  }
});

describe('a lock during a burst stops the granted orders not yet sent', () => {
  it(
    '6 granted orders start, the person locks as soon as the first ' +
      'is signed (no held write): none is sent after the lock call',
    async () => {
      const { bg, wire } = await ready();
      await grantOf(bg, await capOf(100));
      await until(() => armed(bg));
      const before = perpsPosts(wire);
      const o = await btcOrder('0.001');
      const svc = bg.service() as unknown as { o: { journal: { open: (r: unknown) => unknown } } };
      const j = svc.o.journal;
      const realOpen = j.open.bind(j);
      let opened = 0;
      j.open = (r: unknown) => (opened++, realOpen(r));
      const burst = Array.from({ length: 6 }, (_, i) =>
        settle((i % 2 ? bg.page(page2) : bg.page(page)).request('perps_sendCommand', o)),
      );
      await until(() => opened >= 6, 5_000);
      const sentAtLock = perpsPosts(wire) - before;
      const locking = call(bg, 'vault.lock');
      expect((await locking).ok).toBe(true);
      await Promise.all(burst);
      await sleep(100);
      expect(perpsPosts(wire) - before, `sent after the lock call (${sentAtLock} before it)`).toBe(sentAtLock);
    },
    30_000,
  );
});
