/**
 * The dead-man across background restarts, lock and panic, black-box: through procedures,
 * page requests and the sandbox's records. A "restart" is a second `startBackground` on the same
 * database and `storage.session` (what a new service worker sees); the first one is cut off the network
 * at that moment, as a stopped worker would be.
 */
import 'fake-indexeddb/auto';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { fakeBrowser } from 'wxt/testing/fake-browser';
import { startSandbox, type RunningSandbox } from '../sandbox/server';
import { startBackground } from './index';
import { BOUNDS, browser, KDF, withPages } from '../../test/kits/background';

const SITE = 'https://trade.example';
const popup = () => ({
  id: fakeBrowser.runtime.id,
  url: `${fakeBrowser.runtime.getURL('/').replace(/\/$/, '')}/popup.html`,
});
const approvalWindow = () => ({
  id: fakeBrowser.runtime.id,
  url: `${fakeBrowser.runtime.getURL('/').replace(/\/$/, '')}/approval.html`,
});
const page = {
  get id() {
    return fakeBrowser.runtime.id;
  },
  url: `${SITE}/app`,
  frameId: 0,
  tab: { id: 3, url: `${SITE}/app` },
};
type Bg = ReturnType<typeof startBackground>;
type Reply = { ok: boolean; result?: unknown; error?: { name: string } };
type VenueStatus = { venue: string; armed: boolean; renewals: number; error?: string };

let h: RunningSandbox;
let n = 0;
const started: { bg: Bg; net: { cut: boolean } }[] = [];
beforeAll(async () => {
  h = await startSandbox(0);
});
afterAll(async () => {
  await h.close();
});
beforeEach(() => {
  fakeBrowser.reset();
});
afterEach(async () => {
  // Every background of the test stops: locked (its renewals end) and off the network.
  for (const s of started.splice(0)) {
    await call(s.bg, 'vault.lock').catch(() => undefined);
    s.net.cut = true;
  }
});

/**
 * A background whose network can be cut (`cut()`), as a stopped worker's would be; `fail(path)` makes one path fail.
 */
function start(dbName: string) {
  const net = { cut: false, failing: [] as string[] };
  const fetchFn: typeof fetch = (input, init) => {
    const url = String(input instanceof Request ? input.url : input);
    if (net.cut || net.failing.some((p) => url.includes(p))) return Promise.reject(new TypeError('fetch failed'));
    return fetch(input, init);
  };
  const bg = withPages(startBackground({ browser, dbName, kdf: KDF, bounds: BOUNDS, fetchFn }));
  started.push({ bg, net });
  return { bg, net };
}
const call = async (bg: Bg, type: string, payload: unknown = {}, sender: object = popup()) =>
  (await bg.handle({ type, payload }, sender)) as Reply;
const status = async (bg: Bg) => (await call(bg, 'deadman.status')).result as { armed: boolean; venues: VenueStatus[] };
const order = (p: string) => ({
  op: { type: 'createOrders', args: [{ iid: 2, buy: true, qty: '1', p, tif: 'gtc', po: true }] },
});
/** Auto-cancel PATCHes the sandbox accepted, with the time each set. */
const autoCancels = () =>
  h.ctx.requestLog.flatMap((r, i) =>
    r.path === '/perps/v1/trade/auto-cancel' && r.status === 200
      ? [{ i, time: (JSON.parse(r.body ?? '{}') as { op: { args: { time: number } } }).op.args.time }]
      : [],
  );
const accepted = () =>
  h.ctx.requestLog.flatMap((r, i) => (r.path === '/perps/v1/trade/orders' && r.status === 200 ? [i] : []));
const autoCancelAt = () => h.ctx.venue.accounts.get(h.demo.owner.address.toLowerCase())?.autoCancelAt;
async function until(fn: () => Promise<boolean> | boolean): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if (await fn()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error('condition not met');
}

/**
 * Vault, demo owner and proxy keys, a connected site and a live grant for it (created from the approval window of a
 * first order).
 */
async function withGrant(dbName: string) {
  const first = start(dbName);
  const { bg } = first;
  await call(bg, 'vault.create', { password: 'a good password' });
  await call(bg, 'settings.set', {
    perpsUrl: `${h.url}/perps`,
    clobUrl: `${h.url}/clob`,
    gammaUrl: `${h.url}/gamma`,
    dataUrl: `${h.url}/data`,
  });
  await call(bg, 'vault.importOwnerKey', { privateKey: h.demo.owner.privateKey });
  await call(bg, 'proxy.import', {
    account: h.demo.owner.address,
    privateKey: h.demo.proxy.privateKey,
    proxy: h.demo.proxy.address,
    secret: h.demo.proxy.secret,
    expiry: h.demo.proxy.expiry,
  });
  const connected = bg.page(page).request('eth_requestAccounts', undefined);
  await until(() => bg.registry.size === 1);
  const [c] = bg.registry.list();
  bg.registry.decide(c!.id, { approve: true, digest: c!.digest });
  await connected;
  const placed = bg.page(page).request('perps_sendCommand', order('3000'));
  await until(() => bg.registry.size === 1);
  const [v] = bg.registry.list();
  const limits = {
    venue: 'perps',
    allow: { order: true, cancel: true, leverage: false },
    instruments: [2],
    maxNotional: '5000',
    dailyNotional: '50000',
    priceBandPct: '20',
    slippagePct: '1',
  }; // under the caps the offer proposes from the demo equity
  expect((await call(bg, 'grant.create', { approvalId: v!.id, limits, minutes: 60 }, approvalWindow())).ok).toBe(true);
  bg.registry.decide(v!.id, { approve: true, digest: v!.digest });
  await placed;
  await until(async () => (await status(bg)).armed);
  return first;
}

describe('dead-man across a background restart', () => {
  it(
    're-arms on start before any request: status armed, the ' + 'venue gets a new auto-cancel from the new background',
    async () => {
      const name = `dm-${n++}`;
      const old = await withGrant(name);
      old.net.cut = true; // the old worker is gone
      const before = autoCancels().length;
      const { bg } = start(name); // the new worker: same database and session
      await until(async () => (await status(bg)).armed);
      expect((await status(bg)).venues.find((x) => x.venue === 'perps')).toMatchObject({ armed: true, renewals: 1 });
      expect(autoCancels().length).toBeGreaterThan(before);
      expect(autoCancels().at(-1)!.time).toBeGreaterThan(Date.now());
      expect(((await call(bg, 'vault.status')).result as { unlocked: boolean }).unlocked).toBe(true);
    },
  );

  it('a granted request after a restart is signed only after the new background renewed the auto-cancel', async () => {
    const name = `dm-${n++}`;
    const old = await withGrant(name);
    old.net.cut = true;
    const cutAt = h.ctx.requestLog.length;
    const { bg } = start(name);
    const acks = (await bg.page(page).request('perps_sendCommand', order('2999'))) as { status: string }[];
    expect(acks[0]!.status).toBe('ok');
    expect(bg.registry.size).toBe(0); // no window: the grant covered it
    const orderAt = accepted().at(-1)!;
    expect(orderAt).toBeGreaterThan(cutAt);
    expect(autoCancels().some((a) => a.i > cutAt && a.i < orderAt)).toBe(true);
  });

  it(
    'when the switch cannot be armed (the venue refuses the ' +
      'auto-cancel), a granted request asks instead of signing',
    async () => {
      const name = `dm-${n++}`;
      const old = await withGrant(name);
      old.net.cut = true;
      const { bg, net } = start(name);
      net.failing = ['/v1/trade/auto-cancel'];
      const before = accepted().length;
      const p = bg
        .page(page)
        .request('perps_sendCommand', order('2998'))
        .catch((e: unknown) => e);
      await until(() => bg.registry.size === 1);
      const [v] = bg.registry.list();
      expect(v!.flags.join(' ')).toMatch(/kill switch .* is not armed/);
      expect(accepted().length).toBe(before);
      expect((await status(bg)).venues.find((x) => x.venue === 'perps')).toMatchObject({
        armed: false,
        error: expect.any(String),
      });
      bg.registry.decide(v!.id, { approve: false });
      expect(await p).toMatchObject({ code: 4001 });
    },
  );
});

describe('dead-man: halt on lock and panic, disarm on revoke', () => {
  it('panic never unsets the perps auto-cancel: the venue keeps its switch, so it still fires', async () => {
    const name = `dm-${n++}`;
    const { bg } = await withGrant(name);
    const before = autoCancels().length;
    const report = (await call(bg, 'panic.run', { closePositions: false })).result as { locked: boolean };
    expect(report.locked).toBe(true);
    await new Promise((r) => setTimeout(r, 500)); // a disarm nobody awaited would land by now
    expect(
      autoCancels()
        .slice(before)
        .map((a) => a.time),
    ).not.toContain(0);
    expect(autoCancelAt()).toBeGreaterThan(h.ctx.now());
    expect((await status(bg)).venues).toEqual([]);
  });

  it(
    'lock never unsets it either; revoking the grant (a normal ' +
      'end) does, and the audit log has one entry per armed period',
    async () => {
      const name = `dm-${n++}`;
      const { bg } = await withGrant(name);
      await call(bg, 'vault.lock');
      expect(autoCancels().at(-1)!.time).not.toBe(0);
      expect(autoCancelAt()).toBeGreaterThan(h.ctx.now());

      const again = await withGrant(`dm-${n++}`);
      const grants = (await call(again.bg, 'grant.list')).result as { id: string }[];
      await call(again.bg, 'grant.revoke', { id: grants[0]!.id });
      await until(() => autoCancels().at(-1)!.time === 0);
      expect(autoCancelAt()).toBeUndefined();
      const auditList = async () =>
        (await call(again.bg, 'audit.list', { limit: 100 })).result as {
          kind: string;
          origin: string;
          summary: string;
        }[];
      await until(async () => (await auditList()).some((e) => e.kind === 'deadman.end'));
      const audit = await auditList();
      expect(audit.filter((e) => e.kind === 'perps.autoCancel')).toEqual([]);
      const mine = audit.filter((e) => e.origin === 'dead-man' && e.summary.includes('perps'));
      expect(mine.map((e) => e.kind)).toEqual(['deadman.end', 'deadman.arm']);
      expect(mine[0]!.summary).toMatch(/ended: the grant ended; auto-cancel unset\. \d+ renewal\(s\)/);
    },
  );
});
