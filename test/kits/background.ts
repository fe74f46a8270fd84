/**
 * Shared setup of the background's unit suites (test-only; nothing in the extension imports it): cheap
 * KDF parameters and their bounds, the parts of the WebExtension API the background uses on WXT's fake
 * browser (`fakeBrowser.reset()` between tests; windows open as id 1; the badge is not recorded), and
 * `connectPage`: a page's port to the background, the one route a page has (as the content script
 * opens it).
 */
import { fakeBrowser } from 'wxt/testing/fake-browser';
import type { BrowserSender } from '../../lib/messaging/router';
import { PORT_NAME, readReply, type PageEventMessage } from '../../lib/bridge/framing';
import { disconnected, fromRpcError, userRejected, type ProviderRpcError } from '../../lib/errors/rpc';
import type { BackgroundBrowser, BrowserPort } from '../../lib/background/browser';
import { startBackground, type Background, type BackgroundOptions } from '../../lib/background/index';
import { afterAll, afterEach, beforeAll, beforeEach, expect } from 'vitest';
import { startHarness, startLyingGateway, type Harness, type LyingGateway } from './sandbox';
import { WebSocket as NodeWebSocket } from 'ws';
import type { WebSocketConstructor } from '../../lib/streams/perps';
import type { AuditJournal } from '../../lib/audit/journal';
import { grantUseRecords } from '../../lib/grants/use-records';

/** scrypt N = 2^10 (tests only: the extension uses `DEFAULT_KDF`). */
export const KDF = { name: 'scrypt' as const, N: 2 ** 10, r: 8, p: 1, dkLen: 32 as const };
/** Bounds that accept `KDF`. */
export const BOUNDS = { minN: 2 ** 10, maxN: 2 ** 20, maxR: 16, maxP: 4 };

/** The `runtime.onConnect` listener of the background started last on a fake browser of this kit. */
let lastConnect: ((port: BrowserPort) => void) | undefined;

/** A `runtime.onConnect` for a fake browser: the background started last receives the ports. */
export const onConnect: NonNullable<BackgroundBrowser['runtime']['onConnect']> = {
  addListener: (fn) => {
    lastConnect = fn;
  },
};

/** The background's browser API on the fake browser: runtime (with ports), session storage, alarms, windows, badge. */
export const browser: BackgroundBrowser = {
  runtime: {
    get id() {
      return fakeBrowser.runtime.id;
    },
    getURL: (p: string) => fakeBrowser.runtime.getURL(p as '/'),
    onMessage: fakeBrowser.runtime.onMessage as unknown as BackgroundBrowser['runtime']['onMessage'],
    onStartup: fakeBrowser.runtime.onStartup,
    onConnect,
  },
  storage: { session: fakeBrowser.storage.session as unknown as BackgroundBrowser['storage']['session'] },
  alarms: fakeBrowser.alarms as unknown as BackgroundBrowser['alarms'],
  windows: {
    create: async () => ({ id: 1 }),
    update: async () => undefined,
    onRemoved: { addListener: () => undefined },
  },
  action: { setBadgeText: () => undefined },
};

/** A page's end of a port to the background (what the content script relays for a page). */
export type PageClient = {
  /** Sends one request; resolves with the result or rejects with the page's `ProviderRpcError`. */
  request: (method: string, params?: unknown) => Promise<unknown>;
  /** Sends any message on the port as it is (what a compromised content script could send). */
  send: (message: unknown) => void;
  /** The events the background sent to this page, in order. */
  events: PageEventMessage[];
  /** Whether the background disconnected the port (it refused the sender or the port name). */
  disconnected: () => boolean;
};

/** A background with `page(sender)`: opens a new port from that tab to it (`connectPage`). */
export type PagedBackground = Background & { page: (sender: BrowserSender, name?: string) => PageClient };

/**
 * Adds `page(sender)` to a background just started on this kit's fake browser (call it right after
 * `startBackground`: the ports go to the background whose `onConnect` listener was registered last).
 */
export function withPages(bg: Background): PagedBackground {
  const connect = lastConnect;
  if (!connect) throw new Error("No background listens for ports: start one on this kit's browser first.");
  return { ...bg, page: (sender, name) => connectPage(connect, sender, name) };
}

/**
 * Opens a port from `sender` (a tab: `{ id, url, frameId: 0, tab }`) through `connect` (a background's
 * `runtime.onConnect` listener), as the content script does, and returns the page's end. Messages are
 * copied with `structuredClone` both ways. A request on a port the background disconnected rejects
 * with 4900 (retryable), as the content script answers.
 */
function connectPage(
  connect: (port: BrowserPort) => void,
  sender: BrowserSender,
  name: string = PORT_NAME,
): PageClient {
  const toBackground: ((m: unknown) => void)[] = [];
  const waiting = new Map<string, { resolve: (v: unknown) => void; reject: (e: ProviderRpcError) => void }>();
  const events: PageEventMessage[] = [];
  let closed = false;
  const port: BrowserPort = {
    name,
    sender,
    postMessage: (m) => {
      if (closed) throw new Error('The port is disconnected.');
      const reply = readReply(structuredClone(m));
      if (!reply) return;
      if ('event' in reply) {
        events.push(reply);
        return;
      }
      const w = waiting.get(reply.id);
      waiting.delete(reply.id);
      if ('error' in reply) w?.reject(fromRpcError(reply.error));
      else w?.resolve(reply.result);
    },
    disconnect: () => {
      closed = true;
    },
    onMessage: { addListener: (fn) => void toBackground.push(fn) },
    onDisconnect: { addListener: () => undefined },
  };
  connect(port);
  let seq = 0;
  const send = (message: unknown) => {
    const copy = structuredClone(message);
    for (const fn of toBackground) fn(copy);
  };
  return {
    request: (method, params) =>
      new Promise((resolve, reject) => {
        if (closed)
          return reject(
            disconnected('Countersign restarted before answering; retry the request.', { retryable: true }),
          );
        const id = `page-${++seq}`;
        waiting.set(id, { resolve, reject });
        send({ id, method, ...(params === undefined ? {} : { params }) });
      }),
    send,
    events,
    disconnected: () => closed,
  };
}

/** The popup as a sender (the extension's `/popup.html`). */
export const popupSender = (): BrowserSender => ({
  id: fakeBrowser.runtime.id,
  url: `${fakeBrowser.runtime.getURL('/').replace(/\/$/, '')}/popup.html`,
});

/** Calls procedure `type` on `bg` as `sender` (default: the popup); resolves the reply (`Reply`). */
export function callAs(bg: Background, type: string, payload: unknown = {}, sender: BrowserSender = popupSender()) {
  return bg.handle({ type, payload }, sender);
}

/**
 * Waits (about 10 s at most, returning as soon as they are there) until `bg` holds `k` pending approvals; returns what
 * is pending.
 */
export async function waitPending(bg: Background, k = 1) {
  for (let i = 0; i < 2000 && bg.registry.size < k; i++) await new Promise((r) => setTimeout(r, 5));
  return bg.registry.list();
}

/** Polls `fn` every 10 ms until it is true; throws "condition not met" after `tries` polls. */
export async function until(fn: () => Promise<boolean> | boolean, tries = 400): Promise<void> {
  for (let i = 0; i < tries; i++) {
    if (await fn()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error('condition not met');
}

/**
 * Onboards the sandbox's demo account on `bg` by procedures, as a person would: a vault, the sandbox's
 * URLs, the owner key, the demo proxy key and order-book credentials; then (unless `connect: false`)
 * `page` connects and the person approves it.
 */
export async function onboardDemo(
  bg: PagedBackground,
  h: Harness,
  page: BrowserSender,
  o: { connect?: boolean } = {},
): Promise<void> {
  const owner = h.demo.owner.address;
  await callAs(bg, 'vault.create', { password: 'a good password' });
  await callAs(bg, 'settings.set', {
    perpsUrl: h.perps,
    clobUrl: h.clobUrl,
    gammaUrl: `${h.url}/gamma`,
    dataUrl: `${h.url}/data`,
  });
  await callAs(bg, 'vault.importOwnerKey', { privateKey: h.demo.owner.privateKey });
  await callAs(bg, 'proxy.import', {
    account: owner,
    privateKey: h.demo.proxy.privateKey,
    proxy: h.demo.proxy.address,
    secret: h.demo.proxy.secret,
    expiry: h.demo.proxy.expiry,
  });
  await callAs(bg, 'clob.createOrDerive', { account: owner });
  if (o.connect === false) return;
  const connected = bg.page(page).request('eth_requestAccounts', undefined);
  const [view] = await waitPending(bg);
  if (view) bg.registry.decide(view.id, { approve: true, digest: view.digest });
  await connected;
}

/** A procedure's reply as the background suites read it. */
export type Reply = { ok: boolean; result?: unknown; error?: { name: string; shortMessage: string; code?: number } };

/** Resolves after `ms` milliseconds. */
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A page's sender at `origin` (path `/app`) in tab `tab`, frame `frameId` (0: the top frame). */
export const pageSender = (
  origin: string,
  tab: number,
  frameId = 0,
): BrowserSender & { frameId: number; tab: { id: number; url: string } } => ({
  get id() {
    return fakeBrowser.runtime.id;
  },
  url: `${origin}/app`,
  frameId,
  tab: { id: tab, url: `${origin}/app` },
});

/**
 * The common lifecycle of the sandbox-backed background suites (`lib/background/*.test.ts`, e.g.
 * `venue-slow-down.test.ts`), called once at a test file's top level: starts the in-process sandbox on
 * the wall clock before all tests (`onStart` receives it) and closes it after; before each test resets
 * the fake browser and sets the sandbox clock to now; after each test locks every background pushed on
 * the returned array and forgets the order book's heartbeat sessions (so a later test starts without a
 * dead-man).
 */
export function sandboxSuite(onStart: (h: Harness) => void): PagedBackground[] {
  const started: PagedBackground[] = [];
  let h: Harness | undefined;
  beforeAll(async () => {
    h = await startHarness({ now: undefined });
    onStart(h);
  });
  afterAll(async () => {
    await h?.close();
  });
  beforeEach(() => {
    fakeBrowser.reset();
    if (h) h.clock.now = Date.now();
  });
  afterEach(async () => {
    for (const bg of started.splice(0)) await callAs(bg, 'vault.lock').catch(() => undefined);
    h?.ctx.clob.heartbeats.clear();
  });
  return started;
}

/**
 * What the background wrote on its sockets: every JSON frame (the order-book
 * channel's text `PING` is left out), every socket with `authed` once it sent the perps `auth` frame
 * (the account's session; the others are public market data). `onCommand` runs right after a signed
 * command frame was sent; while `unreachable`, new sockets go to a closed port (the venue's stream is down).
 */
export type WsLog = {
  frames: Record<string, unknown>[];
  sockets: (NodeWebSocket & { authed: boolean })[];
  onCommand?: (ws: NodeWebSocket, frame: Record<string, unknown>) => void;
  unreachable?: boolean;
  /** A JSON frame it returns true for is not sent (recorded all the same), e.g. a subscription the venue never gets. */
  drop?: (frame: Record<string, unknown>) => boolean;
};

/**
 * A `ws` WebSocket class to give `startBackground({ WebSocket })`, recording into `log`; `reset()` empties
 * the log (call it before each test).
 */
export function recordingWebSocket(): { log: WsLog; WebSocket: WebSocketConstructor; reset(): void } {
  const log: WsLog = { frames: [], sockets: [] };
  class RecordingWebSocket extends NodeWebSocket {
    authed = false;
    constructor(url: string) {
      super(log.unreachable ? 'ws://127.0.0.1:9/' : url);
      log.sockets.push(this);
    }
    override send(data: string): void {
      let frame: Record<string, unknown>;
      try {
        frame = JSON.parse(data) as Record<string, unknown>;
      } catch {
        super.send(data);
        return;
      }
      if (!log.drop?.(frame)) super.send(data);
      log.frames.push(frame);
      if ((frame.op as { type?: string } | undefined)?.type === 'auth') this.authed = true;
      if ('sig' in frame) log.onCommand?.(this, frame);
    }
  }
  return {
    log,
    WebSocket: RecordingWebSocket,
    reset() {
      log.frames = [];
      log.sockets = [];
      log.onCommand = undefined;
      log.unreachable = false;
      log.drop = undefined;
    },
  };
}

/** The error codes viem's transport retries (lib/page/README.md "Error codes"): no page error may use them. */
export const VIEM_RETRIES: readonly number[] = [-1, -32005, -32603, 429, -32007];

/** The sandbox's current mark price of instrument `iid` (decimal string), read as the venue serves it. */
export async function markPrice(h: Harness, iid: number): Promise<string> {
  const [t] = (await h.read('tickers', { instrument_id: iid })) as { mark_price: string }[];
  if (!t) throw new Error(`no ticker for instrument ${iid}`);
  return t.mark_price;
}

/**
 * A BTC-PERP-only standing grant's limits (perps, 2 000 USDC per order, 20 000 per 24 h, 2 % band, 1 % slippage), as
 * the grant suites use.
 */
export const btcOnly = {
  venue: 'perps',
  instruments: [1],
  allow: { order: true, cancel: true, leverage: false },
  maxNotional: '2000',
  dailyNotional: '20000',
  priceBandPct: '2',
  slippagePct: '1',
};

/** Connects the page `who` (`eth_requestAccounts`), approving its window; resolves the page's answer. */
export async function connectSite(bg: PagedBackground, who: object): Promise<unknown> {
  const p = bg.page(who as never).request('eth_requestAccounts');
  const [view] = await waitPending(bg);
  if (!view) throw new Error('no connect window');
  bg.registry.decide(view.id, { approve: true, digest: view.digest });
  return p;
}

/** How many perps order submissions (`POST …/perps/v1/trade/orders`) a recorded wire holds. */
export const perpsPosts = (w: { sent: { url: string; method: string }[] }): number =>
  w.sent.filter((s) => s.method === 'POST' && /\/perps\/v1\/trade\/orders$/.test(s.url)).length;

/** The wire log of `pagePathKit`'s backgrounds: every request sent, and an optional answer to swap in. */
export type Wire = { sent: SentRequest[]; replaceAnswer?: (url: string, method: string) => Response | undefined };
/** A notification a `pagePathKit` background raised. */
export type Notice = { id: string; title: string; message: string };

/**
 * The shared set-up of the page-path suites (its readers `call`, `owner`, `mark`, `armed`, `grantOf`,
 * `btcOrder`, `codeOf` also serve the grant-permission, idempotency and unknown-outcome suites, which keep
 * their own wire hooks): backgrounds on the suite's
 * sandbox (`harness()`, started by `sandboxSuite`, which also stops what `started` holds) with a wire log
 * and captured notifications, a worker restart, hooks that stop the grant flush or hold the use write, and
 * the BTC / ETH orders the suites send. `site` and `page` are the connected site; `dbPrefix` names the databases.
 */
export function pagePathKit(o: {
  harness: () => Harness;
  started: PagedBackground[];
  site: string;
  page: BrowserSender;
  dbPrefix: string;
}) {
  const { started, page } = o;
  let n = 0;
  const h = () => o.harness();
  const call = async (bg: PagedBackground, type: string, payload: unknown = {}) =>
    (await callAs(bg, type, payload)) as Reply;
  const owner = () => h().demo.owner.address;
  const mark = (iid: number) => markPrice(h(), iid);
  const armed = async (bg: PagedBackground, venue = 'perps') =>
    ((await call(bg, 'deadman.status')).result as { venues: { venue: string; armed: boolean }[] }).venues.some(
      (v) => v.venue === venue && v.armed,
    );
  const grantOf = (bg: PagedBackground, limits: object = btcOnly, origin = o.site) =>
    bg.grants().create({ origin, account: owner(), limits: limits as never, durationMs: 3_600_000 });

  /**
   * A background on the sandbox (onboarded and connected unless `onboard: false`; its streams on `WebSocket` when
   * given), its wire log and the notifications it raised.
   */
  async function ready(
    x: {
      dbName?: string;
      onboard?: boolean;
      wire?: Wire;
      notices?: Notice[];
      now?: () => number;
      WebSocket?: WebSocketConstructor;
    } = {},
  ): Promise<{ bg: PagedBackground; wire: Wire; dbName: string; notices: Notice[] }> {
    const wire: Wire = x.wire ?? { sent: [] };
    const notices = x.notices ?? [];
    const fetchFn = recordingFetch(wire, { onAnswer: (url, method, res) => wire.replaceAnswer?.(url, method) ?? res });
    const dbName = x.dbName ?? `${o.dbPrefix}-${n++}`;
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
        ...(x.now ? { now: x.now } : {}),
        ...(x.WebSocket ? { WebSocket: x.WebSocket } : {}),
      }),
    );
    started.push(bg);
    if (x.onboard !== false) await onboardDemo(bg, h(), page);
    return { bg, wire, dbName, notices };
  }

  /** `x` rounded down to a multiple of `tick` (a decimal string the venue accepts). */
  const onTick = (x: number, tick: number, dp: number) => (Math.floor(x / tick) * tick).toFixed(dp);
  return {
    call,
    owner,
    mark,
    armed,
    grantOf,
    ready,
    codeOf: (e: unknown) => (e as { code?: number }).code,
    settle: <T>(p: Promise<T>) =>
      p.then(
        (r) => ({ r, e: undefined as unknown }),
        (e: unknown) => ({ r: undefined as T | undefined, e }),
      ),
    openOrders: () =>
      [...h().ctx.venue.orders.values()].filter(
        (x) => x.owner === owner().toLowerCase() && (x.status === 'open' || x.status === 'untriggered'),
      ),
    /**
     * A worker restart: a second background on the same database and session store (the first must be treated as
     * stopped).
     */
    restart: async (dbName: string, wire: Wire, notices: Notice[] = []): Promise<PagedBackground> => {
      const { bg } = await ready({ dbName, onboard: false, wire, notices });
      await until(() => armed(bg), 1500);
      return bg;
    },
    /** The worker of `bg` stops: from here its head / held-bucket flush never runs (a stopped worker runs no timer). */
    stopFlush: (bg: PagedBackground): void => {
      (grantUseRecords(bg.vault()) as unknown as { flushHeads: () => Promise<void> }).flushHeads = async () =>
        undefined;
    },
    /**
     * Holds every grant use write of `bg` inside the vault's queue (the bucket is sealed inside
     * `addGrantUse`'s exclusive section), until `release()`: `true` lets the writes go on, an error fails them.
     */
    holdUseWrites: (bg: PagedBackground) => {
      const v = grantUseRecords(bg.vault()) as unknown as { sealBucket: (...a: unknown[]) => Promise<unknown> };
      const real = v.sealBucket.bind(v);
      let open!: (outcome: true | Error) => void;
      const gate = new Promise<true | Error>((r) => (open = r));
      let held = 0;
      v.sealBucket = async (...a: unknown[]) => {
        held++;
        const outcome = await gate;
        if (outcome !== true) throw outcome;
        return real(...a);
      };
      return {
        held: () => held,
        release: (outcome: true | Error = true) => {
          v.sealBucket = real;
          open(outcome);
        },
      };
    },
    /**
     * Holds every audit journal record `bg`'s signer opens (`AuditJournal.open`: a submission is sent only
     * once its record is stored) until `release()`: `true` lets them be stored, an error refuses them.
     */
    holdJournal: (bg: PagedBackground) => {
      const j = (bg.service() as unknown as { o: { journal: AuditJournal } }).o.journal;
      const real = j.open.bind(j);
      let open!: (outcome: true | Error) => void;
      const gate = new Promise<true | Error>((r) => (open = r));
      let held = 0;
      j.open = (record) => {
        held++;
        const r = real(record);
        const stored = gate.then((outcome) => (outcome === true ? r.stored : Promise.reject(outcome)));
        stored.catch(() => undefined);
        return { id: r.id, stored };
      };
      return {
        held: () => held,
        release: (outcome: true | Error = true) => {
          j.open = real;
          open(outcome);
        },
      };
    },
    /**
     * Counts `SigningService.execute` calls of `bg` (a granted order reaches it, and signs, while its use is written).
     */
    countExecutes: (bg: PagedBackground): (() => number) => {
      const svc = bg.service() as unknown as { execute: (...a: unknown[]) => Promise<unknown> };
      const real = svc.execute.bind(svc);
      let calls = 0;
      svc.execute = (...a: unknown[]) => {
        calls++;
        return real(...a);
      };
      return () => calls;
    },
    btcOrder: async (qty = '0.01') => ({
      op: { type: 'createOrders', args: [{ iid: 1, buy: true, qty, p: await mark(1), tif: 'gtc', po: true }] },
    }),
    /** A resting BTC buy 1 % under the mark (inside a 2 % band) with client order id `c`. */
    restingBtc: async (c: string) => ({
      op: {
        type: 'createOrders',
        args: [
          { iid: 1, buy: true, qty: '0.01', p: onTick(Number(await mark(1)) * 0.99, 0.5, 1), tif: 'gtc', po: true, c },
        ],
      },
    }),
    /**
     * A taker BTC order (IOC 0.5 % through the mark) with client order id `c`: it fills at once, so `c` is free again
     * at the venue.
     */
    iocBtc: async (c: string) => ({
      op: {
        type: 'createOrders',
        args: [{ iid: 1, buy: true, qty: '0.01', p: onTick(Number(await mark(1)) * 1.005, 0.5, 1), tif: 'ioc', c }],
      },
    }),
    /** A resting ETH buy 20 % under the mark (outside a BTC-only grant: it asks) with client order id `c`. */
    restingEth: async (c: string) => ({
      op: {
        type: 'createOrders',
        args: [
          { iid: 2, buy: true, qty: '0.1', p: onTick(Number(await mark(2)) * 0.8, 0.05, 2), tif: 'gtc', po: true, c },
        ],
      },
    }),
    /** Approves every pending window of `bg` as shown. */
    approveAll: (bg: PagedBackground) => {
      for (const v of bg.registry.list()) bg.registry.decide(v.id, { approve: true, digest: v.digest });
    },
    closeAll: (bg: PagedBackground) => bg.registry.rejectAll(() => userRejected('closed by the test')),
    /** A BTC-only grant whose 24 h cap is `k` times the notional of one 0.01 BTC order at the mark. */
    capOf: async (k: number) => ({ ...btcOnly, dailyNotional: (Number(await mark(1)) * 0.01 * k).toFixed(2) }),
  };
}

/** `x` rounded down to a multiple of `tick`, with `dp` decimals (a price string the venue accepts). */
export const onTick = (x: number, tick: number, dp: number): string => (Math.floor(x / tick) * tick).toFixed(dp);

/**
 * The lifecycle of a background suite with a sandbox per test (the rate-limit windows one test spends
 * must not reach the next), called once at a test file's top level: before each test resets the fake
 * browser and starts the in-process sandbox on the wall clock (`onStart` receives it); after each, locks
 * every background `start` started and closes the sandbox. `start` starts a background on the kit's
 * fake browser (database `${dbPrefix}-${n}`, the kit's KDF and bounds, plus `o`'s options) and, given
 * `page`, onboards the demo account with that page connected (`onboardDemo`). `call` is `callAs` read
 * as a `Reply`; `owner()` is the demo owner's address.
 */
export function useSandboxBackgrounds(o: { dbPrefix: string; onStart: (h: Harness) => void }) {
  let h: Harness | undefined;
  let n = 0;
  const started: PagedBackground[] = [];
  const harness = (): Harness => {
    if (!h) throw new Error('No sandbox: it starts before each test.');
    return h;
  };
  beforeEach(async () => {
    fakeBrowser.reset();
    h = await startHarness({ now: undefined });
    o.onStart(h);
  });
  afterEach(async () => {
    for (const bg of started.splice(0)) await callAs(bg, 'vault.lock').catch(() => undefined);
    await h?.close();
  });
  return {
    harness,
    call: async (bg: PagedBackground, type: string, payload: unknown = {}) =>
      (await callAs(bg, type, payload)) as Reply,
    owner: () => harness().demo.owner.address,
    /** A background on the sandbox (`x.page`: onboarded with that page connected), locked after the test. */
    start: async (
      x: { page?: BrowserSender } & Omit<BackgroundOptions, 'browser' | 'dbName' | 'kdf' | 'bounds'> = {},
    ): Promise<PagedBackground> => {
      const { page, ...options } = x;
      const bg = withPages(
        startBackground({ browser, dbName: `${o.dbPrefix}-${n++}`, kdf: KDF, bounds: BOUNDS, ...options }),
      );
      started.push(bg);
      if (page) await onboardDemo(bg, harness(), page);
      return bg;
    },
  };
}

/**
 * The set-up of the suites that read through a lying gateway, called once at a test file's top level:
 * the suite's sandbox (`sandboxSuite`; `onStart` receives it), the hop `startLyingGateway` puts in
 * front of it before all tests (`onGateway` receives it; closed after all tests), `kit` (`pagePathKit` for `site` /
 * `page`, databases named `dbPrefix`) and `onHop()`: a background onboarded on the sandbox, then pointed at the hop for
 * every venue URL (as a custom gateway URL).
 */
export function lyingGatewaySuite(o: {
  site: string;
  page: BrowserSender;
  dbPrefix: string;
  onStart: (h: Harness) => void;
  onGateway: (hop: LyingGateway) => void;
}) {
  let h: Harness | undefined;
  let hop: LyingGateway | undefined;
  const started = sandboxSuite((x) => {
    h = x;
    o.onStart(x);
  });
  const harness = (): Harness => {
    if (!h) throw new Error('No sandbox: it starts before all tests.');
    return h;
  };
  const kit = pagePathKit({ harness, started, site: o.site, page: o.page, dbPrefix: o.dbPrefix });
  beforeAll(async () => {
    await until(() => h !== undefined);
    hop = await startLyingGateway(harness().url);
    o.onGateway(hop);
  });
  afterAll(async () => {
    await hop?.close();
  });
  async function onHop(): Promise<PagedBackground> {
    if (!hop) throw new Error('No gateway hop: it starts before all tests.');
    const { bg } = await kit.ready();
    const r = (await callAs(bg, 'settings.set', {
      perpsUrl: `${hop.url}/perps`,
      clobUrl: `${hop.url}/clob`,
      gammaUrl: `${hop.url}/gamma`,
      dataUrl: `${hop.url}/data`,
    })) as { ok: boolean };
    expect(r.ok).toBe(true);
    return bg;
  }
  return { started, kit, onHop };
}

/**
 * One request a background sent through a `recordingFetch`: its URL, method (GET when none is given) and body (when a
 * string, else '').
 */
export type SentRequest = { url: string; method: string; body: string };

/**
 * What a test does to the requests of a `recordingFetch`, at the three points of a request's way (each optional, read
 * per request).
 */
export type FetchHooks = {
  /**
   * True: the request never leaves and is not logged; it fails as the network does (`TypeError` "fetch failed:
   * ENETUNREACH").
   */
  refuse?: (url: string, method: string) => boolean;
  /** Runs once the request is logged, before it leaves: the request waits for it (a request held in flight). */
  beforeSend?: (url: string, method: string) => Promise<void> | void;
  /**
   * Runs with the venue's answer (the request reached the venue): its result is delivered instead; it may wait (an
   * answer held) or throw (an answer lost).
   */
  onAnswer?: (url: string, method: string, res: Response) => Promise<Response> | Response;
};

/**
 * A `fetch` for `startBackground({ fetchFn })` that logs every request it lets leave in `log.sent` (in
 * order, read at each request) and passes it to the network (the in-process sandbox), with `hooks` at
 * the points `FetchHooks` names.
 */
export function recordingFetch(log: { sent: SentRequest[] }, hooks: FetchHooks = {}): typeof fetch {
  return async (input, init) => {
    const url = String(input instanceof Request ? input.url : input);
    const method = init?.method ?? 'GET';
    if (hooks.refuse?.(url, method)) throw new TypeError('fetch failed: ENETUNREACH');
    log.sent.push({ url, method, body: typeof init?.body === 'string' ? init.body : '' });
    await hooks.beforeSend?.(url, method);
    const res = await fetch(input, init);
    return hooks.onAnswer ? hooks.onAnswer(url, method, res) : res;
  };
}

/**
 * How a person grants from an order window: connects `page` (approving its window, `connectSite`), sends
 * `order` (`perps_sendCommand`) from it and, at its window, creates a standing grant of `limits` for
 * `minutes` (default 60) through the `grant.create` procedure (asserted to succeed), then approves the
 * window as shown. Resolves the order's answer.
 */
export async function grantAtOrderWindow(
  bg: PagedBackground,
  page: BrowserSender,
  order: unknown,
  limits: object,
  minutes = 60,
): Promise<unknown> {
  await connectSite(bg, page);
  const first = bg.page(page).request('perps_sendCommand', order);
  const [w] = await waitPending(bg);
  if (!w) throw new Error('no order window');
  expect(((await callAs(bg, 'grant.create', { approvalId: w.id, limits, minutes })) as Reply).ok).toBe(true);
  bg.registry.decide(w.id, { approve: true, digest: w.digest });
  return first;
}

/**
 * Sends page request `method` with `params` from `who` on `bg` and resolves whether it was covered: signed
 * and answered with no window (its answer must be no error). A window that opens is closed (nothing signed)
 * and the request counts as not covered.
 */
export async function coveredBy(
  bg: PagedBackground,
  who: BrowserSender,
  method: string,
  params: unknown,
): Promise<boolean> {
  const p = bg
    .page(who)
    .request(method, params)
    .then(
      (r) => ({ r, e: undefined as unknown }),
      (e: unknown) => ({ r: undefined, e }),
    );
  let done = false;
  void p.then(() => (done = true));
  await until(() => done || bg.registry.size > 0, 1000);
  if (bg.registry.size > 0) {
    bg.registry.rejectAll(() => userRejected('closed by the test'));
    await p;
    return false;
  }
  const { e } = await p;
  expect(e).toBeUndefined();
  return true;
}
