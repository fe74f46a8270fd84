/**
 * The grants suites' shared setup (issue #17): the real background on a fake browser against the
 * in-process sandbox, with a connected site (`SITE`), the demo account's keys and API credentials, and
 * helpers that send page requests and read the sandbox's records. `grantSuite(prefix)` registers the
 * sandbox's hooks; `h` is the running sandbox (a live binding, set before the first test). Test-only:
 * nothing in the extension imports it.
 */
import { afterAll, beforeAll, beforeEach, expect } from 'vitest';
import { fakeBrowser } from 'wxt/testing/fake-browser';
import { startHarness, type Harness } from '../sandbox/testkit';
import { startBackground } from '../background/index';
import { userRejected } from '../provider/errors';
import { BOUNDS, browser, KDF, withPages, type PagedBackground } from '../background/testkit';

/** The running sandbox (set by `grantSuite`'s `beforeAll`). */
export let h: Harness;
let prefix = 'grants';
let n = 0;

/** Registers the suite's hooks: one sandbox for the file, a fresh fake browser per test. `name` prefixes the databases. */
export function grantSuite(name: string): void {
  prefix = name;
  beforeAll(async () => {
    h = await startHarness({ now: undefined });
  });
  afterAll(async () => {
    await h.close();
  });
  beforeEach(() => {
    fakeBrowser.reset();
    // The sandbox's clock starts frozen at beforeAll: bring it to now, or a slow file's later tests send
    // commands "from the future" (more than 5 s ahead) and re-arm kill switches that look stale.
    h.clock.now = Date.now();
  });
}

/** A new background on the database of the last `ready()` (a worker restart on the same profile). */
export function restart(): Bg {
  return withPages(startBackground({ browser, dbName: `${prefix}-${n}`, kdf: KDF, bounds: BOUNDS }));
}

export const SITE = 'https://trade.example';
export const page = { get id() { return fakeBrowser.runtime.id; }, url: `${SITE}/app`, frameId: 0, tab: { id: 3, url: `${SITE}/app` } };
export const popup = () => ({ id: fakeBrowser.runtime.id, url: `${fakeBrowser.runtime.getURL('/').replace(/\/$/, '')}/popup.html` });
export const approvalWindow = () => ({ id: fakeBrowser.runtime.id, url: `${fakeBrowser.runtime.getURL('/').replace(/\/$/, '')}/approval.html` });
/** A background with its page ports (`bg.page(page).request(method, params)`). */
export type Bg = PagedBackground;
export type Reply = { ok: boolean; result?: unknown; error?: { name: string; shortMessage: string; code?: number } };
export const call = async (bg: Bg, type: string, payload: unknown = {}, sender: object = popup()) => (await bg.handle({ type, payload }, sender)) as Reply;


export const owner = () => h.demo.owner.address;
/**
 * Requests that trade or cancel that reached the sandbox. The dead-man's own auto-cancel renewals are
 * not counted (the extension sends them while a grant is live); `autoCancelAt(t)` counts those with time `t`.
 */
export const trading = () => h.ctx.requestLog.filter((r) => r.method !== 'GET' && /^\/perps\/v1\/trade\/(orders|orders-coid|orders\/all|leverage|margin)$|^\/clob\/orders?$/.test(r.path)).length;
export const autoCancelAt = (t: number) => () => h.ctx.requestLog.filter((r) => r.path === '/perps/v1/trade/auto-cancel' && (JSON.parse(r.body ?? '{}') as { op?: { args?: { time?: number } } }).op?.args?.time === t).length;
export const openPerps = () => [...h.ctx.venue.orders.values()].filter((o) => o.owner === owner().toLowerCase() && (o.status === 'open' || o.status === 'untriggered'));
export const BTC = '1';
export const ETH = '2';

export async function ready(): Promise<Bg> {
  const bg = withPages(startBackground({ browser, dbName: `${prefix}-${++n}`, kdf: KDF, bounds: BOUNDS }));
  await call(bg, 'vault.create', { password: 'a good password' });
  await call(bg, 'settings.set', { perpsUrl: h.perps, clobUrl: h.clobUrl, gammaUrl: `${h.url}/gamma`, dataUrl: `${h.url}/data` });
  await call(bg, 'vault.importOwnerKey', { privateKey: h.demo.owner.privateKey });
  await call(bg, 'proxy.import', { account: owner(), privateKey: h.demo.proxy.privateKey, proxy: h.demo.proxy.address, secret: h.demo.proxy.secret, expiry: h.demo.proxy.expiry });
  await call(bg, 'clob.createOrDerive', { account: owner() });
  const p = bg.page(page).request('eth_requestAccounts', undefined);
  const [view] = await waitPending(bg);
  bg.registry.decide(view!.id, { approve: true, digest: view!.digest });
  await p;
  return bg;
}
export async function waitPending(bg: Bg, k = 1) {
  for (let i = 0; i < 400 && bg.registry.size < k; i++) await new Promise((r) => setTimeout(r, 5));
  return bg.registry.list();
}
/** The narrow perps grant of the issue: BTC-PERP only, 2 000 USDC per order, 20 000 per 24 h, 2 % band. */
export const btcOnly = { venue: 'perps', instruments: [1], allow: { order: true, cancel: true, leverage: false }, maxNotional: '2000', dailyNotional: '20000', priceBandPct: '2', slippagePct: '1' };
export const grant = (bg: Bg, limits: object) => bg.grants().create({ origin: SITE, account: owner(), limits: limits as never, durationMs: 3_600_000 });
export const tokenA = () => h.ctx.clob.markets[0]!.tokenIds[0]!;
export const tokenB = () => h.ctx.clob.markets[3]!.tokenIds[0]!;
export const mark = async (iid: string) => ((await h.read('tickers', { instrument_id: Number(iid) })) as { mark_price: string }[])[0]!.mark_price;

/**
 * Sends `method(params)` from the page and expects it to wait for a window: one pending approval whose
 * flags match `flag`, with nothing sent to the sandbox; then rejects it and expects 4001 and still nothing.
 */
export async function expectAsks(bg: Bg, method: string, params: unknown, flag?: RegExp, reached: () => number = trading) {
  const before = reached();
  const outcome = bg.page(page).request(method, params).then(
    () => 'signed without a window',
    (e: { code?: number }) => e,
  );
  const pending = await waitPending(bg);
  expect(pending, 'a window opens').toHaveLength(1);
  if (flag) expect(pending[0]!.flags.join('\n')).toMatch(flag);
  expect(reached() - before, 'nothing reached the sandbox before the window').toBe(0);
  // Closed without counting as the person's rejection (three of those would pause the site).
  bg.registry.rejectAll(() => userRejected('closed by the test'));
  expect(await outcome).toMatchObject({ code: 4001 });
  expect(reached() - before).toBe(0);
}
