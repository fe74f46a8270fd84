/**
 * When the person's authority ends, it ends before the next signature and before the next send, on
 * every path (`lib/authority/epoch.ts`). Each test starts a request, parks it at one kind of wait — a
 * gateway read, a grant check, the approval window, the network wait of a submission (its audit journal
 * record not yet stored), a dead-man renewal, the perps session transport, the popup's own order — then
 * an ending event arrives (lock, auto-lock, panic, a popup revoke, the site's `wallet_revokePermissions`,
 * an account switch, a gateway URL change, the end of a trading session), the wait is let go, and
 * whatever window appears is approved as a careless person would. What reached the venue after the
 * event is read from the sandbox's own request log and the session's frames: nothing may; the page gets
 * a clear EIP-1193 error. The real background on the fake browser against the in-process sandbox.
 */
import 'fake-indexeddb/auto';
import { beforeEach, describe, expect, it } from 'vitest';
import { fakeBrowser } from 'wxt/testing/fake-browser';
import { generatePrivateKey } from 'viem/accounts';
import type { Harness } from '../../test/kits/sandbox';
import type { AuditJournal } from '../audit/journal';
import { userRejected } from '../errors/rpc';
import { AUTOLOCK_ALARM, startBackground } from './index';
import {
  BOUNDS,
  browser,
  btcOnly,
  callAs,
  KDF,
  markPrice,
  onboardDemo,
  pageSender,
  recordingWebSocket,
  sandboxSuite,
  sleep,
  until,
  withPages,
  type PagedBackground,
  type Reply,
} from '../../test/kits/background';

const SITE = 'https://trade.example';
const page = pageSender(SITE, 3);
const recorder = recordingWebSocket();
let h: Harness;
const started = sandboxSuite((x) => (h = x));
beforeEach(() => recorder.reset());

/** The codes a page may get when the request's authority ended (EIP-1193 4001 / 4100 / 4900, -32003 refused). */
const ENDED_CODES = [4001, 4100, 4900, -32003];

/** A hold on the background's gateway requests whose URL and method match; `release` lets them go. */
type Hold = { match: (url: string, method: string) => boolean; held: number; release: () => void; gate: Promise<void> };
function hold(match: Hold['match']): Hold {
  let open!: () => void;
  const gate = new Promise<void>((r) => (open = r));
  return { match, held: 0, gate, release: () => open() };
}

/** Gateway hosts a test can switch to: every one reaches the same sandbox (a new URL, the same venue behind it). */
const ALIASES = /^http:\/\/localhost:[1-3](?=\/)/;

type Ctx = { bg: PagedBackground; holds: Hold[]; other: string; grantId?: string };

/** A background on the sandbox, onboarded, its site connected, and a second account in the vault. */
async function ready(n: string): Promise<Ctx> {
  const holds: Hold[] = [];
  const fetchFn: typeof fetch = async (input, init) => {
    const raw = String(input instanceof Request ? input.url : input);
    const url = raw.replace(ALIASES, h.url);
    const method = init?.method ?? 'GET';
    for (const x of holds) {
      if (x.match(url, method)) {
        x.held++;
        await x.gate;
      }
    }
    return fetch(input instanceof Request ? new Request(url, input) : url, init);
  };
  const bg = withPages(
    startBackground({
      browser,
      dbName: `authority-ends-${n}-${Math.random()}`,
      kdf: KDF,
      bounds: BOUNDS,
      fetchFn,
      WebSocket: recorder.WebSocket,
    }),
  );
  started.push(bg);
  await onboardDemo(bg, h, page);
  const other = ((await callAs(bg, 'vault.importOwnerKey', { privateKey: generatePrivateKey() })) as Reply).result as {
    address: string;
  };
  return { bg, holds, other: other.address };
}

/**
 * Holds every audit journal record the signer of `bg` opens until `release()` (a submission leaves only once its record
 * is stored).
 */
function holdJournal(bg: PagedBackground) {
  const j = (bg.service() as unknown as { o: { journal: AuditJournal } }).o.journal;
  const real = j.open.bind(j);
  let open!: () => void;
  const gate = new Promise<void>((r) => (open = r));
  let held = 0;
  j.open = (record) => {
    held++;
    const r = real(record);
    const stored = gate.then(() => r.stored);
    stored.catch(() => undefined);
    return { id: r.id, stored };
  };
  return { held: () => held, release: () => ((j.open = real), open()) };
}

const owner = () => h.demo.owner.address;
const btcOrder = async () => ({
  op: {
    type: 'createOrders',
    args: [{ iid: 1, buy: true, qty: '0.01', p: await markPrice(h, 1), tif: 'gtc', po: true }],
  },
});
const armed = async (bg: PagedBackground) =>
  (
    (await callAs(bg, 'deadman.status')) as Reply & { result: { venues: { venue: string; armed: boolean }[] } }
  ).result.venues.some((v) => v.venue === 'perps' && v.armed);
const state = async (bg: PagedBackground) =>
  (((await callAs(bg, 'vault.status')) as Reply).result as { state: string }).state;
/** The perps session's state as `streams.status` answers it (undefined: no session). */
const perpsStream = async (bg: PagedBackground) =>
  (
    ((await callAs(bg, 'streams.status')) as Reply).result as { streams: { venue: string; state: string }[] }
  ).streams.find((s) => s.venue === 'perps')?.state;
/**
 * A grant of the site's: the kill switch armed and the perps session it opens live (its orders go over the session).
 */
async function granted(c: Ctx): Promise<void> {
  c.grantId = (
    await c.bg.grants().create({ origin: SITE, account: owner(), limits: btcOnly as never, durationMs: 3_600_000 })
  ).id;
  await until(() => armed(c.bg));
  await until(async () => (await perpsStream(c.bg)) === 'live');
}
/**
 * A grant of the site's while the venue's socket cannot be reached: the kill switch armed, the perps session down (its
 * orders go over REST).
 */
async function grantedOverRest(c: Ctx): Promise<void> {
  recorder.log.unreachable = true;
  c.grantId = (
    await c.bg.grants().create({ origin: SITE, account: owner(), limits: btcOnly as never, durationMs: 3_600_000 })
  ).id;
  await until(() => armed(c.bg));
}
const settle = <T>(p: Promise<T>) =>
  p.then(
    (r) => ({ r, e: undefined as unknown }),
    (e: unknown) => ({ r: undefined as T | undefined, e }),
  );

/**
 * What reached the venue from index `from` of the sandbox's request log on (it records what came over the
 * session too): orders and auto-cancel renewals; and the signed command frames the background wrote on
 * its sockets from frame `frames` on.
 */
function reachedSince(from: number, frames: number) {
  const log = h.ctx.requestLog.slice(from);
  return {
    orders: log.filter((r) => r.method === 'POST' && /^\/perps\/v1\/trade\/orders$|^\/clob\/orders?$/.test(r.path))
      .length,
    renewals: log.filter((r) => r.path === '/perps/v1/trade/auto-cancel').length,
    frames: recorder.log.frames
      .slice(frames)
      .filter((f) => 'sig' in f && (f.op as { type?: string } | undefined)?.type !== 'auth').length,
  };
}

type Ending = { name: string; approveAfter: boolean; run: (c: Ctx) => Promise<{ after?: Promise<unknown> } | void> };
const ENDINGS: Record<string, Ending> = {
  lock: { name: 'the person locks', approveAfter: true, run: async (c) => void (await callAs(c.bg, 'vault.lock')) },
  autoLock: {
    name: 'auto-lock fires',
    approveAfter: true,
    run: async (c) => {
      await fakeBrowser.alarms.onAlarm.trigger({ name: AUTOLOCK_ALARM, scheduledTime: Date.now() } as Parameters<
        typeof fakeBrowser.alarms.onAlarm.trigger
      >[0]);
      await until(async () => (await state(c.bg)) !== 'unlocked');
    },
  },
  panic: {
    name: 'the person presses panic',
    approveAfter: true,
    run: async (c) => {
      const running = callAs(c.bg, 'panic.run', { closePositions: false });
      await until(() => c.bg.service().halted);
      return { after: running }; // waits for the request in flight: awaited after the hold is let go
    },
  },
  popupRevoke: {
    name: 'the person revokes the grant in the popup',
    approveAfter: false,
    run: async (c) => void (await callAs(c.bg, 'grant.revoke', { id: c.grantId })),
  },
  siteRevoke: {
    name: 'the site disconnects (wallet_revokePermissions)',
    approveAfter: true,
    run: async (c) => void (await c.bg.page(page).request('wallet_revokePermissions', [{ eth_accounts: {} }])),
  },
  accountSwitch: {
    name: 'the person switches accounts',
    approveAfter: true,
    run: async (c) => void (await callAs(c.bg, 'account.select', { address: c.other })),
  },
  venueChange: {
    name: 'the person changes the gateway URL',
    approveAfter: true,
    run: async (c) =>
      void (await callAs(c.bg, 'settings.set', {
        perpsUrl: 'http://localhost:3/perps',
        clobUrl: 'http://localhost:3/clob',
      })),
  },
  sessionEnd: {
    name: 'the trading session ends (its last grant revoked)',
    approveAfter: false,
    run: async (c) => {
      await callAs(c.bg, 'grant.revoke', { id: c.grantId });
      await until(async () => (await state(c.bg)) === 'locked');
    },
  },
};

/**
 * A kind of wait: `start` sends the request and resolves once it is parked there (its outcome, as the
 * page or popup sees it, in `outcome`); `release` lets it go on.
 */
type Parked = { outcome: Promise<{ e: unknown; r?: unknown }>; release: () => void };
type Wait = { name: string; setup?: (c: Ctx) => Promise<void>; start: (c: Ctx) => Promise<Parked> };

/** The order the parked request sends (read at the sandbox's mark before it starts). */
let pendingOrder: unknown;
const pageOrder = (c: Ctx) => settle(c.bg.page(page).request('perps_sendCommand', pendingOrder));

const WAITS: Record<string, Wait> = {
  read: {
    name: 'a gateway read (the book a window checks the price against)',
    start: async (c) => {
      const x = hold((url, m) => m === 'GET' && url.includes('/v1/info/book'));
      c.holds.push(x);
      const outcome = pageOrder(c);
      await until(() => x.held > 0);
      return { outcome, release: x.release };
    },
  },
  grantCheck: {
    name: 'a grant check (the reference price read)',
    setup: async (c) => {
      // The public stream never gets its subscription: the reference price is read over REST.
      recorder.log.drop = (f) => Array.isArray(f.chs) && f.chs.includes('tickers::all');
      await granted(c);
    },
    start: async (c) => {
      const x = hold((url, m) => m === 'GET' && url.includes('/v1/info/tickers'));
      c.holds.push(x);
      const outcome = pageOrder(c);
      await until(() => x.held > 0);
      return { outcome, release: x.release };
    },
  },
  approval: {
    name: 'the approval window being open',
    start: async (c) => {
      const outcome = pageOrder(c);
      await until(() => c.bg.registry.size > 0);
      const [view] = c.bg.registry.list();
      // The person clicks Approve on what the window showed before the event.
      return {
        outcome,
        release: () =>
          void (
            c.bg.registry.list().some((v) => v.id === view!.id) &&
            c.bg.registry.decide(view!.id, { approve: true, digest: view!.digest })
          ),
      };
    },
  },
  journal: {
    name: 'the network wait of an approved submission (its journal record not yet stored)',
    start: async (c) => {
      const j = holdJournal(c.bg);
      const outcome = pageOrder(c);
      await until(() => c.bg.registry.size > 0);
      const [view] = c.bg.registry.list();
      c.bg.registry.decide(view!.id, { approve: true, digest: view!.digest });
      await until(() => j.held() > 0);
      return { outcome, release: j.release };
    },
  },
  journalClob: {
    name: 'the network wait of an approved order-book post (its journal record not yet stored)',
    start: async (c) => {
      const j = holdJournal(c.bg);
      const token = h.ctx.clob.markets[0]!.tokenIds[0]!;
      const outcome = settle(
        c.bg.page(page).request('clob_postOrders', {
          orders: [{ tokenId: token, side: 'BUY', price: '0.40', size: '10', orderType: 'GTC' }],
        }),
      );
      await until(() => c.bg.registry.size > 0);
      const [view] = c.bg.registry.list();
      c.bg.registry.decide(view!.id, { approve: true, digest: view!.digest });
      await until(() => j.held() > 0);
      return { outcome, release: j.release };
    },
  },
  journalGranted: {
    name: 'the network wait of a granted submission (its journal record not yet stored)',
    setup: granted,
    start: async (c) => {
      const j = holdJournal(c.bg);
      const outcome = pageOrder(c);
      await until(() => j.held() > 0);
      return { outcome, release: j.release };
    },
  },
  sessionGranted: {
    name: 'the network wait of a granted submission in a trading session',
    setup: async (c) => {
      await granted(c);
      await ENDINGS.autoLock!.run(c);
      expect(await state(c.bg)).toBe('session');
    },
    start: async (c) => {
      const j = holdJournal(c.bg);
      const outcome = pageOrder(c);
      await until(() => j.held() > 0);
      return { outcome, release: j.release };
    },
  },
  grantCheckRest: {
    name: 'a grant check with the perps session down (the granted order bound for REST)',
    setup: grantedOverRest,
    start: (c) => WAITS.grantCheck!.start(c),
  },
  journalGrantedRest: {
    name: 'the REST wait of a granted submission with the perps session down (its journal record not yet stored)',
    setup: grantedOverRest,
    start: (c) => WAITS.journalGranted!.start(c),
  },
  sessionGrantedRest: {
    name: 'the REST wait of a granted submission in a trading session with the perps session down',
    setup: async (c) => {
      await grantedOverRest(c);
      await ENDINGS.autoLock!.run(c);
      expect(await state(c.bg)).toBe('session');
    },
    start: (c) => WAITS.sessionGranted!.start(c),
  },
  popup: {
    name: "the network wait of the popup's own order",
    start: async (c) => {
      const j = holdJournal(c.bg);
      const outcome = callAs(c.bg, 'perps.send', { account: owner(), ...(pendingOrder as object) }).then((r) =>
        r.ok ? { e: undefined, r: r.result } : { e: (r as Reply).error },
      );
      await until(() => j.held() > 0);
      return { outcome, release: j.release };
    },
  },
  transport: {
    name: 'the perps session transport (a granted order about to go over the live session)',
    setup: granted,
    start: async (c) => {
      const j = holdJournal(c.bg);
      const outcome = pageOrder(c);
      await until(() => j.held() > 0);
      return { outcome, release: j.release };
    },
  },
};

/** The waits of a granted order (set up with `granted`): it goes over the perps session the grant opened. */
const GRANTED_WAITS: ReadonlySet<string> = new Set(['grantCheck', 'journalGranted', 'sessionGranted', 'transport']);

/** Which endings each wait meets (auto-lock keeps a granted request: a trading session is what it is for). */
const MATRIX: [wait: keyof typeof WAITS, endings: (keyof typeof ENDINGS)[]][] = [
  ['read', ['lock', 'panic', 'siteRevoke', 'accountSwitch', 'venueChange']],
  ['grantCheck', ['lock', 'panic', 'popupRevoke', 'siteRevoke', 'accountSwitch', 'venueChange']],
  ['approval', ['lock', 'autoLock', 'panic', 'siteRevoke', 'accountSwitch', 'venueChange']],
  ['journal', ['lock', 'autoLock', 'panic', 'siteRevoke', 'accountSwitch', 'venueChange']],
  ['journalClob', ['lock', 'autoLock', 'panic', 'siteRevoke', 'accountSwitch', 'venueChange']],
  ['journalGranted', ['lock', 'panic', 'popupRevoke', 'siteRevoke', 'accountSwitch', 'venueChange']],
  ['sessionGranted', ['sessionEnd', 'lock', 'panic']],
  ['grantCheckRest', ['lock', 'panic', 'popupRevoke', 'siteRevoke', 'accountSwitch', 'venueChange']],
  ['journalGrantedRest', ['lock', 'panic', 'popupRevoke', 'siteRevoke', 'accountSwitch', 'venueChange']],
  ['sessionGrantedRest', ['sessionEnd', 'lock', 'panic']],
  ['popup', ['lock', 'autoLock', 'panic', 'accountSwitch', 'venueChange']],
  ['transport', ['lock', 'panic', 'popupRevoke', 'accountSwitch', 'venueChange']],
];

for (const [w, endings] of MATRIX) {
  const wait = WAITS[w]!;
  describe(`authority ends during ${wait.name}`, () => {
    it('with no ending event the parked request goes through (the set-up reaches the venue)', async () => {
      const c = await ready(`${w}-none`);
      await wait.setup?.(c);
      pendingOrder = await btcOrder();
      const parked = await wait.start(c);
      const from = h.ctx.requestLog.length;
      const frames = recorder.log.frames.length;
      parked.release();
      let done = false;
      void parked.outcome.finally(() => (done = true));
      for (let i = 0; i < 200 && !done; i++) {
        for (const v of c.bg.registry.list()) c.bg.registry.decide(v.id, { approve: true, digest: v.digest });
        await sleep(10);
      }
      const { e: error } = await parked.outcome;
      expect(error).toBeUndefined();
      // A grant's orders go over the perps session it opened; the others over REST.
      expect(reachedSince(from, frames)).toMatchObject({ orders: 1, frames: GRANTED_WAITS.has(w) ? 1 : 0 });
    }, 30_000);

    for (const e of endings) {
      const ending = ENDINGS[e]!;
      it(`${ending.name}: nothing reaches the venue after it and the request gets a clear error`, async () => {
        const c = await ready(`${w}-${e}`);
        await wait.setup?.(c);
        pendingOrder = await btcOrder();
        const parked = await wait.start(c);
        const from = h.ctx.requestLog.length;
        const frames = recorder.log.frames.length;
        const after = (await ending.run(c))?.after;
        parked.release();
        // A careless person approves whatever window shows up after the event (for a popup revoke: closes it).
        let done = false;
        void parked.outcome.finally(() => (done = true));
        for (let i = 0; i < 200 && !done; i++) {
          for (const v of c.bg.registry.list()) {
            if (ending.approveAfter) c.bg.registry.decide(v.id, { approve: true, digest: v.digest });
            else c.bg.registry.rejectAll(() => userRejected('closed by the test'));
          }
          await sleep(10);
        }
        const { e: error } = await parked.outcome;
        await after;
        await sleep(100);
        expect(reachedSince(from, frames), 'what reached the venue after the event').toMatchObject({
          orders: 0,
          frames: 0,
        });
        expect(
          ENDED_CODES,
          `the request's error (${String((error as { message?: string } | undefined)?.message)})`,
        ).toContain((error as { code?: number } | undefined)?.code);
      }, 30_000);
    }
  });
}

describe('authority ends during a dead-man renewal', () => {
  it('with no ending event the parked renewal reaches the venue (the set-up reaches it)', async () => {
    const c = await ready('deadman-none');
    expect(((await callAs(c.bg, 'settings.set', { perpsUrl: 'http://localhost:2/perps' })) as Reply).ok).toBe(true);
    const x = hold((url, m) => m === 'GET' && url.includes('/v1/info/exchange'));
    c.holds.push(x);
    await c.bg.grants().create({ origin: SITE, account: owner(), limits: btcOnly as never, durationMs: 3_600_000 });
    await until(() => x.held > 0);
    const from = h.ctx.requestLog.length;
    x.release();
    await until(() => reachedSince(from, 0).renewals > 0);
  }, 30_000);
  for (const e of ['venueChange', 'lock', 'panic'] as const) {
    const ending = ENDINGS[e]!;
    it(`${ending.name}: the renewal signed for the venue before it is not sent after it`, async () => {
      const c = await ready(`deadman-${e}`);
      // A gateway URL the dead-man has not read the domain of yet: its first renewal waits for that read.
      expect(((await callAs(c.bg, 'settings.set', { perpsUrl: 'http://localhost:2/perps' })) as Reply).ok).toBe(true);
      const x = hold((url, m) => m === 'GET' && url.includes('/v1/info/exchange'));
      c.holds.push(x);
      c.grantId = (
        await c.bg.grants().create({ origin: SITE, account: owner(), limits: btcOnly as never, durationMs: 3_600_000 })
      ).id;
      await until(() => x.held > 0);
      const from = h.ctx.requestLog.length;
      const after = (await ending.run(c))?.after;
      x.release();
      await sleep(500);
      await after;
      expect(
        reachedSince(from, recorder.log.frames.length).renewals,
        'kill-switch renewals that reached the venue after the event',
      ).toBe(0);
    }, 30_000);
  }
});

describe('a window whose request lost its authority', () => {
  for (const e of ['siteRevoke', 'venueChange'] as const) {
    const ending = ENDINGS[e]!;
    it(`closes at once when ${ending.name}, without the person acting, and the page is told why`, async () => {
      const c = await ready(`window-${e}`);
      pendingOrder = await btcOrder();
      const outcome = pageOrder(c);
      await until(() => c.bg.registry.size > 0);
      await ending.run(c);
      expect(c.bg.registry.size, 'windows still open').toBe(0);
      const { e: error } = await outcome;
      expect((error as { code?: number }).code).toBe(e === 'siteRevoke' ? 4100 : 4900);
      expect((error as { message?: string }).message).toMatch(/Nothing was sent/);
    }, 30_000);
  }
});

describe('a standing permission asked for before the authority ended', () => {
  for (const e of ['siteRevoke', 'venueChange', 'accountSwitch'] as const) {
    const ending = ENDINGS[e]!;
    it(`is never created once ${ending.name}, even if the person approves its window`, async () => {
      const c = await ready(`grant-window-${e}`);
      const params = [
        {
          expiry: Math.floor(Date.now() / 1000) + 3600,
          signer: { type: 'wallet' },
          permissions: [{ type: 'countersign-grant', policies: [], data: btcOnly }],
        },
      ];
      const asked = settle(c.bg.page(page).request('wallet_grantPermissions', params));
      await until(() => c.bg.registry.size > 0);
      const [view] = c.bg.registry.list();
      await ending.run(c);
      if (c.bg.registry.list().some((v) => v.id === view!.id))
        c.bg.registry.decide(view!.id, { approve: true, digest: view!.digest });
      const { e: error } = await asked;
      expect(ENDED_CODES).toContain((error as { code?: number } | undefined)?.code);
      expect(await c.bg.grants().list()).toEqual([]);
    }, 30_000);
  }
});

describe('what is started after the event holds the new authority', () => {
  const approveNext = async (bg: PagedBackground) => {
    await until(() => bg.registry.size > 0);
    const [v] = bg.registry.list();
    bg.registry.decide(v!.id, { approve: true, digest: v!.digest });
  };

  it('after a gateway URL change, a new page order (approved) reaches the venue at the new URL', async () => {
    const c = await ready('after-venue');
    await ENDINGS.venueChange!.run(c);
    const from = h.ctx.requestLog.length;
    const sent = settle(c.bg.page(page).request('perps_sendCommand', await btcOrder()));
    await approveNext(c.bg);
    expect((await sent).e).toBeUndefined();
    expect(reachedSince(from, 0).orders).toBe(1);
  }, 30_000);

  it('after switching accounts and back, the site’s new granted order goes', async () => {
    const c = await ready('after-switch');
    await granted(c);
    await ENDINGS.accountSwitch!.run(c);
    expect(((await callAs(c.bg, 'account.select', { address: owner() })) as Reply).ok).toBe(true);
    const from = h.ctx.requestLog.length;
    expect((await settle(c.bg.page(page).request('perps_sendCommand', await btcOrder()))).e).toBeUndefined();
    expect(reachedSince(from, 0).orders).toBe(1);
  }, 30_000);

  it('after a lock and an unlock, the popup’s own order goes', async () => {
    const c = await ready('after-lock');
    await ENDINGS.lock!.run(c);
    expect(((await callAs(c.bg, 'vault.unlock', { password: 'a good password' })) as Reply).ok).toBe(true);
    const from = h.ctx.requestLog.length;
    const r = (await callAs(c.bg, 'perps.send', { account: owner(), ...(await btcOrder()) })) as Reply;
    expect(r.error).toBeUndefined();
    expect(reachedSince(from, 0).orders).toBe(1);
  }, 30_000);

  it('panic’s own cancel goes through while the order it ended is dropped', async () => {
    const c = await ready('panic-own');
    pendingOrder = await btcOrder();
    const parked = await WAITS.journal!.start(c);
    const from = h.ctx.requestLog.length;
    const running = callAs(c.bg, 'panic.run', { closePositions: false });
    await until(() => c.bg.service().halted);
    parked.release();
    const report = ((await running) as Reply).result as { perps: { ok?: boolean } };
    expect(report.perps.ok, JSON.stringify(report)).toBe(true);
    expect(reachedSince(from, 0).orders).toBe(0);
    expect(
      h.ctx.requestLog.slice(from).some((r) => r.method === 'DELETE' && r.path.startsWith('/perps/v1/trade/orders')),
    ).toBe(true);
    expect((await parked.outcome).e).toBeDefined();
  }, 30_000);
});
