import 'fake-indexeddb/auto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { fakeBrowser } from 'wxt/testing/fake-browser';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { PROCEDURES, type ProcedureName } from '../messaging/protocol';
import { startHarness, type Harness } from '../sandbox/testkit';
import { AUTOLOCK_ALARM, startBackground, type BackgroundBrowser } from './index';

const KDF = { name: 'scrypt' as const, N: 2 ** 10, r: 8, p: 1, dkLen: 32 as const };
const BOUNDS = { minN: 2 ** 10, maxN: 2 ** 20, maxR: 16, maxP: 4 };
let badge = '';
let windowsOpened = 0;
const browser: BackgroundBrowser = {
  runtime: {
    get id() {
      return fakeBrowser.runtime.id;
    },
    getURL: (p: string) => fakeBrowser.runtime.getURL(p as '/'),
    onMessage: fakeBrowser.runtime.onMessage as unknown as BackgroundBrowser['runtime']['onMessage'],
    onStartup: fakeBrowser.runtime.onStartup,
    onConnect: { addListener: () => undefined },
  },
  storage: { session: fakeBrowser.storage.session as unknown as BackgroundBrowser['storage']['session'] },
  alarms: fakeBrowser.alarms as unknown as BackgroundBrowser['alarms'],
  windows: {
    create: async () => ({ id: ++windowsOpened }),
    update: async () => undefined,
    onRemoved: { addListener: () => undefined },
  },
  action: {
    setBadgeText: (o) => {
      badge = o.text;
    },
  },
};
const EXT = () => fakeBrowser.runtime.getURL('/');
const popup = () => ({ id: fakeBrowser.runtime.id, url: `${EXT().replace(/\/$/, '')}/popup.html` });
const contentScript = { id: fakeBrowser.runtime.id, url: 'https://evil.example/page', frameId: 0, tab: { id: 7, url: 'https://evil.example/page' } };
let n = 0;

function start(dbName = `bg-${n++}`) {
  return startBackground({ browser, dbName, kdf: KDF, bounds: BOUNDS });
}
type Reply = { ok: boolean; result?: unknown; error?: { name: string; code?: number } };
const call = async (bg: ReturnType<typeof start>, type: string, payload: unknown = {}, sender: object = popup()) =>
  (await bg.handle({ type, payload }, sender)) as Reply;

beforeEach(() => {
  fakeBrowser.reset();
});

describe('background: lock state', () => {
  it('creates a vault, arms the auto-lock alarm, and locks when it fires', async () => {
    const bg = start();
    expect((await call(bg, 'vault.create', { password: 'a good password' })).ok).toBe(true);
    const alarm = await fakeBrowser.alarms.get(AUTOLOCK_ALARM);
    expect(alarm).toBeTruthy();
    await fakeBrowser.alarms.onAlarm.trigger({ name: AUTOLOCK_ALARM, scheduledTime: Date.now() } as Parameters<typeof fakeBrowser.alarms.onAlarm.trigger>[0]);
    await new Promise((r) => setTimeout(r, 10));
    expect(((await call(bg, 'vault.status')).result as { unlocked: boolean }).unlocked).toBe(false);
  });

  it('survives a worker restart without asking again, but not a browser restart', async () => {
    const name = `bg-${n++}`;
    const bg = start(name);
    await call(bg, 'vault.create', { password: 'a good password' });
    const { result } = await call(bg, 'vault.generateOwnerKey', {});
    const restarted = start(name); // same storage.session, new worker
    expect(((await call(restarted, 'vault.status')).result as { unlocked: boolean }).unlocked).toBe(true);
    expect((await call(restarted, 'proxy.list', { account: (result as { address: string }).address })).ok).toBe(true);
    await fakeBrowser.runtime.onStartup.trigger();
    await new Promise((r) => setTimeout(r, 10));
    expect(((await call(start(name), 'vault.status')).result as { unlocked: boolean }).unlocked).toBe(false);
  });
});

describe('background: senders', () => {
  it('refuses every key operation from a content-script sender (4100) and changes nothing', async () => {
    const bg = start();
    for (const type of ['vault.create', 'vault.unlock', 'vault.generateOwnerKey', 'vault.revealOwnerKey', 'vault.exportBackup', 'perps.send', 'clob.postOrders', 'proxy.issue', 'settings.set']) {
      const r = await call(bg, type, {}, contentScript);
      expect(r.ok).toBe(false);
      expect(r.error).toMatchObject({ name: 'Messaging.UnauthorizedSenderError', code: 4100 });
    }
    expect(((await call(bg, 'vault.status')).result as { initialized: boolean }).initialized).toBe(false);
  });

  it('refuses another extension, a sub-frame, and an unknown extension page', async () => {
    const bg = start();
    const other = { ...popup(), id: 'another-extension' };
    const subframe = { ...contentScript, frameId: 3 };
    const options = { id: fakeBrowser.runtime.id, url: `${EXT()}options.html` };
    for (const sender of [other, subframe, options]) expect((await call(bg, 'vault.status', {}, sender)).error?.code).toBe(4100);
  });

  it('does not trust a sender claimed inside the message', async () => {
    const bg = start();
    const r = (await bg.handle({ type: 'vault.status', payload: {}, sender: popup() }, contentScript)) as Reply;
    expect(r.error?.code).toBe(4100);
  });

  it('names the field of an invalid payload and refuses unknown procedures', async () => {
    const bg = start();
    const r = await call(bg, 'settings.set', { autoLockMinutes: 0 });
    expect(r.error).toMatchObject({ name: 'InvalidFieldError' });
    expect((r.error as unknown as { shortMessage: string }).shortMessage).toContain('payload.autoLockMinutes');
    expect((await call(bg, 'vault.nope')).error?.code).toBe(4200);
    expect((await call(bg, '__proto__')).error?.code).toBe(4200);
  });
});

describe('background: replies never carry secrets', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ now: undefined });
  });
  afterAll(async () => {
    await h.close();
  });

  it('walks every procedure and finds no private key, proxy secret or API secret in any reply', async () => {
    const bg = start();
    const ownerKey = generatePrivateKey();
    const owner = privateKeyToAccount(ownerKey).address;
    const proxyKey = generatePrivateKey();
    const proxy = privateKeyToAccount(proxyKey).address;
    await call(bg, 'vault.create', { password: 'a good password' });
    await call(bg, 'settings.set', { perpsUrl: h.perps, clobUrl: h.clobUrl, gammaUrl: `${h.url}/gamma`, dataUrl: `${h.url}/data` });
    await call(bg, 'vault.importOwnerKey', { privateKey: ownerKey });
    const replies: Record<string, unknown> = {};
    const fixtures: { [N in ProcedureName]: unknown } = {
      'vault.status': {},
      'vault.create': { password: 'another password' },
      'vault.unlock': { password: 'a good password' },
      'vault.lock': {},
      'vault.changePassword': { oldPassword: 'a good password', newPassword: 'a good password' },
      'vault.importOwnerKey': { privateKey: ownerKey },
      'vault.generateOwnerKey': {},
      'vault.revealOwnerKey': { address: owner, password: 'a good password' },
      'vault.accounts': {},
      'vault.exportBackup': {},
      'vault.restoreBackup': { backup: '{}', password: 'a good password' },
      'settings.get': {},
      'settings.set': { autoLockMinutes: 20 },
      'proxy.issue': { account: owner, expiry: Date.now() + 86_400_000, label: 'issued' },
      'proxy.import': { account: owner, privateKey: proxyKey, proxy, secret: 'imported-proxy-secret', expiry: Date.now() + 3_600_000 },
      'proxy.list': { account: owner },
      'proxy.delete': { account: owner, proxy },
      'clob.createOrDerive': { account: owner },
      'clob.postOrders': { account: owner, orders: [{ tokenId: h.ctx.clob.markets[0]!.tokenIds[0], side: 'BUY', price: '0.4', size: '10', orderType: 'GTC' }] },
      'clob.openOrders': { account: owner },
      'clob.cancel': { account: owner, orderIds: ['0x01'] },
      'perps.send': { account: owner, op: { type: 'createOrders', args: [{ iid: 2, buy: true, qty: '1', p: '3000', tif: 'gtc' }] } },
      'perps.read': { account: owner, name: 'credentials' },
      'perps.book': { iid: 2 },
      'audit.list': {},
      'catalogue.markets': { q: 'sandbox' },
      'approval.list': {},
      'approval.decide': { id: 'nope', approve: false },
      'account.select': { address: owner },
      'session.activity': {},
      'clob.book': { tokenId: h.ctx.clob.markets[0]!.tokenIds[0] },
      'page.request': { id: '1', method: 'eth_accounts' },
    };
    for (const type of Object.keys(PROCEDURES) as ProcedureName[]) {
      expect(fixtures, `fixture for ${type}`).toHaveProperty(type);
      if (type === 'vault.revealOwnerKey') continue; // exists to show the owner key after re-authentication (checked below)
      replies[type] = await call(bg, type, fixtures[type], type === 'page.request' ? contentScript : popup());
    }
    expect(replies['proxy.issue']).toMatchObject({ ok: true });
    expect(replies['clob.createOrDerive']).toMatchObject({ ok: true });
    expect(replies['clob.postOrders']).toMatchObject({ ok: true });
    expect(replies['perps.send']).toMatchObject({ ok: true });
    const vault = bg.vault();
    const secrets = [
      ownerKey.slice(2),
      proxyKey.slice(2),
      'imported-proxy-secret',
      (await vault.clobCredentials(owner)).secret,
      (await vault.clobCredentials(owner)).passphrase,
      (await vault.proxyFor(owner)).secret, // the issued proxy's secret (latest expiry)
    ];
    const text = JSON.stringify(replies);
    for (const s of secrets) expect(text).not.toContain(s);
    // The one reveal procedure needs the password again.
    expect((await call(bg, 'vault.revealOwnerKey', { address: owner, password: 'wrong password' })).ok).toBe(false);
    expect(((await call(bg, 'vault.revealOwnerKey', { address: owner, password: 'a good password' })).result as { privateKey: string }).privateKey).toBe(ownerKey);
  });
});

describe('background: page requests and approvals', () => {
  let h: Harness;
  const page = (origin: string) => ({ id: fakeBrowser.runtime.id, url: `${origin}/app`, frameId: 0, tab: { id: 3, url: `${origin}/app` } });
  const SITE = 'https://trade.example';
  beforeAll(async () => {
    h = await startHarness({ now: undefined });
  });
  afterAll(async () => {
    await h.close();
  });

  async function ready() {
    const bg = start();
    await call(bg, 'vault.create', { password: 'a good password' });
    await call(bg, 'settings.set', { perpsUrl: h.perps, clobUrl: h.clobUrl, gammaUrl: `${h.url}/gamma`, dataUrl: `${h.url}/data` });
    await call(bg, 'vault.importOwnerKey', { privateKey: h.demo.owner.privateKey });
    await call(bg, 'proxy.import', { account: h.demo.owner.address, privateKey: h.demo.proxy.privateKey, proxy: h.demo.proxy.address, secret: h.demo.proxy.secret, expiry: h.demo.proxy.expiry });
    return bg;
  }
  const waitPending = async (bg: ReturnType<typeof start>, n = 1) => {
    for (let i = 0; i < 200 && bg.registry.size < n; i++) await new Promise((r) => setTimeout(r, 5));
    return bg.registry.list();
  };
  const connect = async (bg: ReturnType<typeof start>, origin = SITE) => {
    const p = bg.pageRequest(page(origin), 'eth_requestAccounts', undefined);
    const [view] = await waitPending(bg);
    bg.registry.decide(view!.id, { approve: true, digest: view!.digest });
    return p;
  };
  const order = { op: { type: 'createOrders', args: [{ iid: 2, buy: true, qty: '2.5', p: '3120.50', tif: 'gtc', po: true }] } };

  it('answers eth_chainId without a connection and refuses unknown methods with 4200', async () => {
    const bg = await ready();
    expect(await bg.pageRequest(page(SITE), 'eth_chainId', undefined)).toBe('0x13882');
    await expect(bg.pageRequest(page(SITE), 'eth_sendTransaction', [])).rejects.toMatchObject({ code: 4200 });
    await expect(bg.pageRequest(page(SITE), 'eth_accounts', undefined)).resolves.toEqual([]);
  });

  it('signs nothing for an origin that has not connected (4100), and refuses plain-http origins', async () => {
    const bg = await ready();
    await expect(bg.pageRequest(page(SITE), 'perps_sendCommand', order)).rejects.toMatchObject({ code: 4100 });
    await expect(bg.pageRequest(page('http://trade.example'), 'eth_requestAccounts', undefined)).rejects.toMatchObject({ code: 4100 });
    expect(bg.registry.size).toBe(0);
  });

  it('connects after approval, then shows an order in plain words and places it only once approved', async () => {
    const bg = await ready();
    expect(await connect(bg)).toEqual([h.demo.owner.address]);
    const before = h.ctx.requestLog.length;
    const p = bg.pageRequest(page(SITE), 'perps_sendCommand', order);
    const [view] = await waitPending(bg);
    expect(view).toMatchObject({ origin: SITE, signer: 'proxy key', title: 'Place an order' });
    expect(view!.lines[0]).toBe('Buy 2.5 ETH-PERP at 3,120.50, good-til-cancelled, post-only — request weight 1, action weight 1');
    expect(badge).toBe('1');
    expect(h.ctx.requestLog.slice(before).filter((r) => r.path.startsWith('/perps/v1/trade'))).toEqual([]);
    bg.registry.decide(view!.id, { approve: true, digest: view!.digest });
    const acks = (await p) as { status: string; oid: number }[];
    expect(acks[0]!.status).toBe('ok');
    expect(badge).toBe('');
    expect(() => bg.registry.decide(view!.id, { approve: true, digest: view!.digest })).toThrow(/no longer pending/);
  });

  it('rejects with 4001 and sends nothing when the person rejects, or approves a different digest', async () => {
    const bg = await ready();
    await connect(bg);
    const before = h.ctx.requestLog.length;
    const p1 = bg.pageRequest(page(SITE), 'perps_sendCommand', order);
    const [v1] = await waitPending(bg);
    bg.registry.decide(v1!.id, { approve: false });
    await expect(p1).rejects.toMatchObject({ code: 4001 });
    const p2 = bg.pageRequest(page(SITE), 'perps_sendCommand', order);
    const [v2] = await waitPending(bg);
    expect(() => bg.registry.decide(v2!.id, { approve: true, digest: `0x${'0'.repeat(64)}` })).toThrow(/does not match/);
    await expect(p2).rejects.toMatchObject({ code: 4001 });
    expect(h.ctx.requestLog.slice(before).filter((r) => r.path.startsWith('/perps/v1/trade'))).toEqual([]);
  });

  it('flags a withdrawal to a new address and shows the amount in USDC and base units', async () => {
    const bg = await ready();
    await connect(bg);
    const to = '0x99999999999999999999999999999999999999A4'.toLowerCase();
    const p = bg.pageRequest(page(SITE), 'perps_sendCommand', { op: { type: 'withdraw', args: { account: h.demo.owner.address, token: h.ctx.config.usdc, amount: '10000000', to } } });
    const [view] = await waitPending(bg);
    expect(view!.lines[0]).toBe('Withdraw 10.00 USDC (10000000 base units) to 0x99…99a4');
    expect(view!.signer).toBe('owner key');
    expect(view!.flags).toContain('A new address: you have never sent funds here.');
    expect(view!.expiresAt - view!.createdAt).toBe(300_000);
    bg.registry.decide(view!.id, { approve: true, digest: view!.digest });
    expect(await p).toMatchObject({ status: 'ok' });
  });

  it('limits pending requests to 5 per origin (-32002) and rejects them all with 4900 on lock', async () => {
    const bg = await ready();
    await connect(bg);
    const pending = Array.from({ length: 5 }, () => bg.pageRequest(page(SITE), 'perps_sendCommand', order).catch((e) => e));
    await waitPending(bg, 5);
    await expect(bg.pageRequest(page(SITE), 'perps_sendCommand', order)).rejects.toMatchObject({ code: -32002 });
    await call(bg, 'vault.lock');
    for (const e of await Promise.all(pending)) expect(e).toMatchObject({ code: 4900 });
    await expect(bg.pageRequest(page(SITE), 'perps_sendCommand', order)).rejects.toMatchObject({ code: 4900 });
  });

  it('names the bad field of a malformed command (-32602) and refuses proxy issuance from sites', async () => {
    const bg = await ready();
    await connect(bg);
    await expect(bg.pageRequest(page(SITE), 'perps_sendCommand', { op: { type: 'createOrders', args: [{ iid: 1, buy: true, qty: '1e2', tif: 'ioc' }] } })).rejects.toMatchObject({ code: -32602, shortMessage: expect.stringContaining('op.args[0].qty') });
    await expect(bg.pageRequest(page(SITE), 'perps_sendCommand', { op: { type: 'createProxy', args: { owner: h.demo.owner.address, proxy: h.demo.counterparty.address, expiry: Date.now() + 1000 } } })).rejects.toMatchObject({ code: 4200 });
    await expect(bg.pageRequest(page(SITE), 'perps_sendCommand', { op: { type: 'cancelOrders', args: ['x'.repeat(70_000)] } })).rejects.toMatchObject({ code: -32602 });
  });

  it('signs typed data only for the venue domains', async () => {
    const bg = await ready();
    await connect(bg);
    const foreign = { domain: { name: 'Uniswap', version: '1', chainId: 1 }, types: { Permit: [{ name: 'x', type: 'uint256' }] }, primaryType: 'Permit', message: { x: '1' } };
    await expect(bg.pageRequest(page(SITE), 'eth_signTypedData_v4', [h.demo.owner.address, JSON.stringify(foreign)])).rejects.toMatchObject({ code: 4200, shortMessage: expect.stringContaining("venue's own typed data") });
  });
});
