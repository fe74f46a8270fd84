import 'fake-indexeddb/auto';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { fakeBrowser } from 'wxt/testing/fake-browser';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { PROCEDURES, type ProcedureName } from '../messaging/protocol';
import { startHarness, type Harness } from '../../test/kits/sandbox';
import { AUTOLOCK_ALARM, startBackground, type BackgroundBrowser } from './index';
import { BOUNDS, browser as kitBrowser, KDF, withPages } from '../../test/kits/background';
import { userRejected } from '../errors/rpc';
import { internalTransfer, createProxy as createProxyCommand } from '../perps/commands';
import { hashPerpsOp, perpsOpTypedData, withdrawTypedData, createProxyTypedData } from '../perps/signing';
import { clobAuthTypedData } from '../clob/auth';
import { buildClobOrder, clobOrderTypedData, EXCHANGE_V2 } from '../clob/order';
import { grantUseRecords } from '../grants/use-records';

let badge = '';
let windowsOpened = 0;
let windowRemoved: ((id: number) => void) | undefined;
/** The kit's fake browser, with windows and a badge this suite watches. */
const browser: BackgroundBrowser = {
  ...kitBrowser,
  windows: {
    create: async () => ({ id: ++windowsOpened }),
    update: async () => undefined,
    onRemoved: {
      addListener: (fn: (id: number) => void) => {
        windowRemoved = fn;
      },
    },
  },
  action: {
    setBadgeText: (o) => {
      badge = o.text;
    },
  },
};
const EXT = () => fakeBrowser.runtime.getURL('/');
const popup = () => ({ id: fakeBrowser.runtime.id, url: `${EXT().replace(/\/$/, '')}/popup.html` });
const contentScript = {
  id: fakeBrowser.runtime.id,
  url: 'https://evil.example/page',
  frameId: 0,
  tab: { id: 7, url: 'https://evil.example/page' },
};
let n = 0;

function start(dbName = `bg-${n++}`) {
  return withPages(startBackground({ browser, dbName, kdf: KDF, bounds: BOUNDS }));
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
    await fakeBrowser.alarms.onAlarm.trigger({ name: AUTOLOCK_ALARM, scheduledTime: Date.now() } as Parameters<
      typeof fakeBrowser.alarms.onAlarm.trigger
    >[0]);
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
    for (const type of [
      'vault.create',
      'vault.unlock',
      'vault.generateOwnerKey',
      'vault.revealOwnerKey',
      'vault.exportBackup',
      'perps.send',
      'clob.postOrders',
      'proxy.issue',
      'settings.set',
    ]) {
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
    for (const sender of [other, subframe, options])
      expect((await call(bg, 'vault.status', {}, sender)).error?.code).toBe(4100);
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
    await call(bg, 'settings.set', {
      perpsUrl: h.perps,
      clobUrl: h.clobUrl,
      gammaUrl: `${h.url}/gamma`,
      dataUrl: `${h.url}/data`,
    });
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
      'settings.clearCleartext': {},
      'clob.rotateCredentials': { account: owner },
      'settings.checkConnections': {},
      'proxy.issue': { account: owner, expiry: Date.now() + 86_400_000, label: 'issued' },
      'proxy.import': {
        account: owner,
        privateKey: proxyKey,
        proxy,
        secret: 'imported-proxy-secret',
        expiry: Date.now() + 3_600_000,
      },
      'proxy.list': { account: owner },
      'proxy.delete': { account: owner, proxy },
      'clob.createOrDerive': { account: owner },
      'clob.postOrders': {
        account: owner,
        orders: [
          { tokenId: h.ctx.clob.markets[0]!.tokenIds[0], side: 'BUY', price: '0.4', size: '10', orderType: 'GTC' },
        ],
      },
      'clob.openOrders': { account: owner },
      'clob.cancel': { account: owner, orderIds: ['0x01'] },
      'perps.send': {
        account: owner,
        op: { type: 'createOrders', args: [{ iid: 2, buy: true, qty: '1', p: '3000', tif: 'gtc' }] },
      },
      'perps.read': { account: owner, name: 'credentials' },
      'perps.book': { iid: 2 },
      'audit.list': {},
      'audit.origins': {},
      'audit.verify': {},
      'audit.export': { format: 'json' },
      'catalogue.markets': { q: 'sandbox' },
      'approval.list': {},
      'approval.decide': { id: 'nope', approve: false },
      'approval.showing': { id: 'nope', digest: `0x${'0'.repeat(64)}` },
      'approval.empty': {},
      'account.select': { address: owner },
      'clob.trades': { account: owner },
      'grant.create': {
        approvalId: 'nope',
        limits: {
          venue: 'perps',
          instruments: [2],
          allow: { order: true, cancel: true, leverage: false },
          maxNotional: '2000',
          dailyNotional: '20000',
          priceBandPct: '2',
        },
        minutes: 60,
      },
      'grant.offer': { approvalId: 'nope' },
      'grant.list': {},
      'deadman.status': {},
      'panic.run': { closePositions: false },
      'grant.revoke': { id: 'nope' },
      'data.portfolio': { account: owner },
      'session.activity': {},
      'streams.status': {},
      'notifications.get': {},
      'notifications.set': { fills: false },
      'streams.watch': {},
      'clob.book': { tokenId: h.ctx.clob.markets[0]!.tokenIds[0] },
      'clob.depositWallet.derive': { account: owner },
      'clob.depositWallet.create': { account: owner },
      'clob.depositWallet.status': { account: owner },
      'clob.walletBatch': { account: owner, batch: { kind: 'setup' } },
    };
    for (const type of Object.keys(PROCEDURES) as ProcedureName[]) {
      expect(fixtures, `fixture for ${type}`).toHaveProperty(type);
      // exists to show the owner key after re-authentication (checked below)
      if (type === 'vault.revealOwnerKey') continue;
      if (type === 'panic.run') continue; // locks the vault: run last (below)
      replies[type] = await call(bg, type, fixtures[type], popup());
      // vault.lock ran before: changePassword leaves a locked vault locked; unlock to walk on.
      if (type === 'vault.changePassword') await call(bg, 'vault.unlock', { password: 'a good password' });
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
    // A proxy issued through `perps.send` would answer its secret to the popup: only `proxy.issue` (which
    // keeps the secret in the vault) issues proxies, and nothing reaches the gateway.
    const proxiesBefore = h.ctx.venue.account(owner).proxies.size;
    const sneaky = await call(bg, 'perps.send', {
      account: owner,
      op: {
        type: 'createProxy',
        args: { owner, proxy: privateKeyToAccount(generatePrivateKey()).address, expiry: Date.now() + 3_600_000 },
      },
    });
    expect(sneaky).toMatchObject({ ok: false, error: { code: -32602 } });
    expect(JSON.stringify(sneaky)).toContain('op.type');
    expect(h.ctx.venue.account(owner).proxies.size).toBe(proxiesBefore);
    replies['panic.run'] = await call(bg, 'panic.run', { closePositions: true });
    expect(replies['panic.run']).toMatchObject({ ok: true, result: { locked: true } });
    const text = JSON.stringify(replies);
    for (const s of secrets) expect(text).not.toContain(s);
    // The one reveal procedure needs the password again.
    expect((await call(bg, 'vault.unlock', { password: 'a good password' })).ok).toBe(true);
    expect(
      (
        (await call(bg, 'vault.revealOwnerKey', { address: owner, password: 'a good password' })).result as {
          privateKey: string;
        }
      ).privateKey,
    ).toBe(ownerKey);
    // (a wrong one counts in the unlock back-off, so the right one is checked first)
    expect(await call(bg, 'vault.revealOwnerKey', { address: owner, password: 'wrong password' })).toMatchObject({
      ok: false,
      error: { name: 'Vault.WrongPasswordError' },
    });
  });
});

describe('background: page requests and approvals', () => {
  let h: Harness;
  const page = (origin: string) => ({
    id: fakeBrowser.runtime.id,
    url: `${origin}/app`,
    frameId: 0,
    tab: { id: 3, url: `${origin}/app` },
  });
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
    await call(bg, 'settings.set', {
      perpsUrl: h.perps,
      clobUrl: h.clobUrl,
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
    return bg;
  }
  const waitPending = async (bg: ReturnType<typeof start>, n = 1) => {
    for (let i = 0; i < 200 && bg.registry.size < n; i++) await new Promise((r) => setTimeout(r, 5));
    return bg.registry.list();
  };
  const connect = async (bg: ReturnType<typeof start>, origin = SITE) => {
    const p = bg.page(page(origin)).request('eth_requestAccounts', undefined);
    const [view] = await waitPending(bg);
    bg.registry.decide(view!.id, { approve: true, digest: view!.digest });
    return p;
  };
  const order = {
    op: { type: 'createOrders', args: [{ iid: 2, buy: true, qty: '2.5', p: '3120.50', tif: 'gtc', po: true }] },
  };

  it(
    'closing the approval window rejects only the request it ' +
      'displayed; one that arrived while it closed stays pending',
    async () => {
      const bg = await ready();
      const approval = { id: fakeBrowser.runtime.id, url: `${EXT().replace(/\/$/, '')}/approval.html` };
      const a = bg.page(page('https://one.example')).request('eth_requestAccounts', undefined);
      const [shown] = await waitPending(bg);
      expect((await call(bg, 'approval.showing', { id: shown!.id, digest: shown!.digest }, approval)).ok).toBe(true);
      // The popup cannot claim what the window shows.
      expect((await call(bg, 'approval.showing', { id: shown!.id, digest: shown!.digest })).error?.code).toBe(4100);
      bg.registry.decide(shown!.id, { approve: true, digest: shown!.digest });
      await a;
      // A second request arrives while the (now empty) window is closing: it was never shown.
      const b = bg.page(page('https://two.example')).request('eth_requestAccounts', undefined);
      const [late] = await waitPending(bg);
      windowRemoved?.(windowsOpened);
      expect(bg.registry.list().map((x) => x.id)).toEqual([late!.id]);
      // Shown in the next window, then that window is closed: this one is rejected (4001).
      windowRemoved?.(-1); // another window: nothing happens
      expect(bg.registry.size).toBe(1);
      await call(bg, 'approval.showing', { id: late!.id, digest: late!.digest }, approval);
      windowRemoved?.(windowsOpened);
      await expect(b).rejects.toMatchObject({ code: 4001 });
    },
  );

  it('wallet_connect connects as eth_requestAccounts does: one window, then the account without asking', async () => {
    const bg = await ready();
    const site = bg.page(page(SITE));
    const first = site.request('wallet_connect', []);
    const [view] = await waitPending(bg);
    bg.registry.decide(view!.id, { approve: true, digest: view!.digest });
    const accounts = await first;
    expect(accounts).toEqual([expect.stringMatching(/^0x[0-9a-fA-F]{40}$/)]);
    expect(await site.request('wallet_connect', [])).toEqual(accounts);
    expect(bg.registry.size).toBe(0);
    expect(await site.request('eth_accounts', undefined)).toEqual(accounts);
  });

  it('answers eth_chainId without a connection and refuses unknown methods with 4200', async () => {
    const bg = await ready();
    expect(await bg.page(page(SITE)).request('eth_chainId', undefined)).toBe('0x13882');
    await expect(bg.page(page(SITE)).request('eth_sendTransaction', [])).rejects.toMatchObject({ code: 4200 });
    await expect(bg.page(page(SITE)).request('eth_accounts', undefined)).resolves.toEqual([]);
  });

  it(
    'refuses a request over 64 KiB on the port with -32602 before ' +
      'anything is asked (the content script is not trusted to check)',
    async () => {
      const bg = await ready();
      const site = bg.page(page(SITE));
      const opened = windowsOpened;
      // eth_requestAccounts ignores its params: without the port's size check this would open a window.
      const big = { note: 'x'.repeat(64 * 1024) };
      await expect(site.request('eth_requestAccounts', big)).rejects.toMatchObject({
        code: -32602,
        message: 'The request is larger than 64 KiB.',
      });
      expect(bg.registry.size).toBe(0);
      expect(windowsOpened).toBe(opened);
      // Just under the limit, the same request asks (the limit is on the size, not the method).
      const small = site.request('eth_requestAccounts', { note: 'x'.repeat(60 * 1024) });
      expect(await waitPending(bg)).toHaveLength(1);
      bg.registry.rejectAll(() => userRejected('closed by the test'));
      await expect(small).rejects.toMatchObject({ code: 4001 });
    },
  );

  it('drops a port from anything but a top-frame page, and requests without a usable id', async () => {
    const bg = await ready();
    const extensionPage = bg.page({ id: fakeBrowser.runtime.id, url: `${EXT().replace(/\/$/, '')}/popup.html` });
    expect(extensionPage.disconnected()).toBe(true);
    const subFrame = bg.page({ ...page(SITE), frameId: 2 });
    expect(subFrame.disconnected()).toBe(true);
    await expect(subFrame.request('eth_chainId')).rejects.toMatchObject({ code: 4900 });
    const wrongName = bg.page(page(SITE), 'another-port');
    expect(wrongName.disconnected()).toBe(true);
    const site = bg.page(page(SITE));
    expect(site.disconnected()).toBe(false);
    site.send({ id: 'x'.repeat(65), method: 'eth_requestAccounts' });
    site.send({ method: 'eth_requestAccounts' });
    await new Promise((r) => setTimeout(r, 20));
    expect(bg.registry.size).toBe(0);
    expect(await site.request('eth_chainId')).toBe('0x13882');
  });

  it(
    'EIP-1193 events: lock and revoke leave the chain served (accountsChanged [], ' +
      'no disconnect); unlock sends connect; a chain id change sends chainChanged',
    async () => {
      const bg = await ready();
      const tab = bg.page(page(SITE));
      const connected = tab.request('eth_requestAccounts', undefined);
      const [view] = await waitPending(bg);
      bg.registry.decide(view!.id, { approve: true, digest: view!.digest });
      await connected;
      tab.events.length = 0;
      await call(bg, 'vault.lock');
      expect(tab.events).toEqual([{ event: 'accountsChanged', data: [] }]);
      expect(await tab.request('eth_chainId')).toBe('0x13882'); // still served: not disconnected
      tab.events.length = 0;
      await call(bg, 'vault.unlock', { password: 'a good password' });
      expect(tab.events).toEqual([
        { event: 'connect', data: { chainId: '0x13882' } },
        { event: 'accountsChanged', data: [h.demo.owner.address] },
      ]);
      tab.events.length = 0;
      await call(bg, 'settings.set', { clobChainId: 137 });
      expect(tab.events).toEqual([{ event: 'chainChanged', data: '0x89' }]);
      expect(await tab.request('eth_chainId')).toBe('0x89');
      tab.events.length = 0;
      await call(bg, 'settings.set', { autoLockMinutes: 20 }); // no chain change: no event
      expect(tab.events).toEqual([]);
      await tab.request('wallet_revokePermissions', [{ eth_accounts: {} }]);
      expect(tab.events).toEqual([{ event: 'accountsChanged', data: [] }]);
    },
  );

  it('signs nothing for an origin that has not connected (4100), and refuses plain-http origins', async () => {
    const bg = await ready();
    await expect(bg.page(page(SITE)).request('perps_sendCommand', order)).rejects.toMatchObject({ code: 4100 });
    await expect(bg.page(page('http://trade.example')).request('eth_requestAccounts', undefined)).rejects.toMatchObject(
      { code: 4100 },
    );
    expect(bg.registry.size).toBe(0);
  });

  it('connects after approval, then shows an order in plain words and places it only once approved', async () => {
    const bg = await ready();
    expect(await connect(bg)).toEqual([h.demo.owner.address]);
    const before = h.ctx.requestLog.length;
    const p = bg.page(page(SITE)).request('perps_sendCommand', order);
    const [view] = await waitPending(bg);
    expect(view).toMatchObject({ origin: SITE, signer: 'proxy key', title: 'Place an order' });
    expect(view!.lines[0]).toBe(
      'Buy 2.50 ETH-PERP (#2) at 3,120.50, good-til-cancelled, post-only — request weight 1, action weight 1',
    );
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
    const p1 = bg.page(page(SITE)).request('perps_sendCommand', order);
    const [v1] = await waitPending(bg);
    bg.registry.decide(v1!.id, { approve: false });
    await expect(p1).rejects.toMatchObject({ code: 4001 });
    const p2 = bg.page(page(SITE)).request('perps_sendCommand', order);
    const [v2] = await waitPending(bg);
    expect(() => bg.registry.decide(v2!.id, { approve: true, digest: `0x${'0'.repeat(64)}` })).toThrow(
      /does not match/,
    );
    await expect(p2).rejects.toMatchObject({ code: 4001 });
    expect(h.ctx.requestLog.slice(before).filter((r) => r.path.startsWith('/perps/v1/trade'))).toEqual([]);
  });

  it('flags a withdrawal to a new address and shows the amount in USDC and base units', async () => {
    const bg = await ready();
    await connect(bg);
    const to = '0x99999999999999999999999999999999999999A4'.toLowerCase();
    const p = bg.page(page(SITE)).request('perps_sendCommand', {
      op: {
        type: 'withdraw',
        args: { account: h.demo.owner.address, token: h.ctx.config.usdc, amount: '10000000', to },
      },
    });
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
    const pending = Array.from({ length: 5 }, () =>
      bg
        .page(page(SITE))
        .request('perps_sendCommand', order)
        .catch((e) => e),
    );
    await waitPending(bg, 5);
    await expect(bg.page(page(SITE)).request('perps_sendCommand', order)).rejects.toMatchObject({ code: -32002 });
    await call(bg, 'vault.lock');
    for (const e of await Promise.all(pending)) expect(e).toMatchObject({ code: 4900 });
    await expect(bg.page(page(SITE)).request('perps_sendCommand', order)).rejects.toMatchObject({ code: 4900 });
  });

  it('names the bad field of a malformed command (-32602) and refuses proxy issuance from sites', async () => {
    const bg = await ready();
    await connect(bg);
    await expect(
      bg.page(page(SITE)).request('perps_sendCommand', {
        op: { type: 'createOrders', args: [{ iid: 1, buy: true, qty: '1e2', tif: 'ioc' }] },
      }),
    ).rejects.toMatchObject({ code: -32602, shortMessage: expect.stringContaining('op.args[0].qty') });
    await expect(
      bg.page(page(SITE)).request('perps_sendCommand', {
        op: {
          type: 'createProxy',
          args: { owner: h.demo.owner.address, proxy: h.demo.counterparty.address, expiry: Date.now() + 1000 },
        },
      }),
    ).rejects.toMatchObject({ code: 4200 });
    await expect(
      bg.page(page(SITE)).request('perps_sendCommand', { op: { type: 'cancelOrders', args: ['x'.repeat(70_000)] } }),
    ).rejects.toMatchObject({ code: -32602 });
  });

  const json = (x: unknown) => JSON.stringify(x, (_k, v) => (typeof v === 'bigint' ? v.toString() : v));
  const trading = () =>
    h.ctx.requestLog.filter(
      (r) => r.method !== 'GET' && /^\/perps\/v1\/(trade|account)|^\/clob\/(orders?|auth)/.test(r.path),
    ).length;

  it(
    'eth_signTypedData_v4 signs nothing: Op, Withdraw, CreateProxy, ClobAuth ' +
      'and Order are each refused (4200) with the method that shows them decoded',
    async () => {
      const bg = await ready();
      await connect(bg);
      const owner = h.demo.owner.address;
      const { domain, withdrawDomain } = await bg.service().perpsDomains();
      // A site's Op whose data is the hash of an internal transfer to the site's address.
      const transfer = internalTransfer({
        account: owner,
        token: h.ctx.config.usdc,
        amount: '5000',
        to: h.demo.counterparty.address,
      });
      expect(perpsOpTypedData({ domain, op: transfer.op, salt: 77, ts: Date.now() }).message.data).toBe(
        hashPerpsOp(transfer.op),
      );
      const order = buildClobOrder({
        signer: owner,
        signatureType: 0,
        tokenId: h.ctx.clob.markets[0]!.tokenIds[0]!,
        side: 'BUY',
        makerAmount: '1000000',
        takerAmount: '2000000',
        timestampMs: Date.now(),
      });
      const proxy = createProxyCommand({
        owner,
        proxy: h.demo.counterparty.address,
        expiry: Date.now() + 60_000,
      }).createProxy!;
      const payloads: [string, unknown, RegExp][] = [
        ['Op', perpsOpTypedData({ domain, op: transfer.op, salt: 77, ts: Date.now() }), /perps_sendCommand/],
        [
          'Withdraw',
          withdrawTypedData({
            domain: withdrawDomain,
            account: owner,
            token: h.ctx.config.usdc,
            amount: 10_000_000n,
            to: h.demo.counterparty.address,
            salt: 1,
            ts: Math.floor(Date.now() / 1000),
          }),
          /perps_sendCommand/,
        ],
        [
          'CreateProxy',
          createProxyTypedData({ domain, proxy: proxy.proxy, expiry: proxy.expiry, salt: 1, ts: Date.now() }),
          /proxy keys/,
        ],
        [
          'ClobAuth',
          clobAuthTypedData(owner, { chainId: 80002, timestamp: Math.floor(Date.now() / 1000), nonce: 0 }),
          /only in the extension/,
        ],
        ['Order', clobOrderTypedData({ chainId: 80002, verifyingContract: EXCHANGE_V2, order }), /clob_postOrders/],
        [
          'Permit',
          {
            domain: { name: 'Uniswap', version: '1', chainId: 1 },
            types: { Permit: [{ name: 'x', type: 'uint256' }] },
            primaryType: 'Permit',
            message: { x: '1' },
          },
          /does not sign typed data/,
        ],
      ];
      const auditBefore = (await bg.db().getAll('audit')).length;
      const before = trading();
      for (const [primary, td, message] of payloads) {
        for (const form of [json(td), JSON.parse(json(td))]) {
          const err = await bg
            .page(page(SITE))
            .request('eth_signTypedData_v4', [owner, form])
            .catch((e) => e);
          expect(err, primary).toMatchObject({ code: 4200, shortMessage: expect.stringMatching(message) });
        }
      }
      expect(bg.registry.size).toBe(0);
      expect((await bg.db().getAll('audit')).length).toBe(auditBefore);
      expect(trading()).toBe(before);
    },
  );

  it(
    'gives a page L2 headers only for order and account-read ' +
      'routes, never for /auth/… (the API secret cannot be derived)',
    async () => {
      const bg = await ready();
      await call(bg, 'clob.createOrDerive', { account: h.demo.owner.address });
      await connect(bg);
      for (const [method, requestPath] of [
        ['POST', '/auth/api-key'],
        ['GET', '/auth/derive-api-key'],
        ['GET', '/auth/api-keys'],
        ['DELETE', '/auth/api-key'],
        ['GET', '//auth/api-key'],
        ['GET', '/AUTH/derive-api-key'],
        ['GET', '/%61uth/derive-api-key'],
        ['GET', '/data/../auth/derive-api-key'],
        ['POST', '/order?x=1'],
      ] as const) {
        const err = (await bg
          .page(page(SITE))
          .request('clob_signRequest', { method, requestPath })
          .catch((e: unknown) => e)) as { code: number };
        expect(err.code, `${method} ${requestPath}`).toBe(requestPath.includes('?') ? -32602 : 4200);
      }
      expect(bg.registry.size).toBe(0);
      const p = bg
        .page(page(SITE))
        .request('clob_signRequest', { method: 'DELETE', requestPath: '/order', body: '{"orderID":"0xabc"}' });
      const [view] = await waitPending(bg);
      expect(view!.lines).toEqual([
        'Sign DELETE /order for the order-book exchange with your API key.',
        'Cancel order 0xabc',
      ]);
      bg.registry.decide(view!.id, { approve: true, digest: view!.digest });
      const headers = (await p) as Record<string, string>;
      expect(Object.keys(headers).sort()).toEqual([
        'SVC_ADDRESS',
        'SVC_API_KEY',
        'SVC_PASSPHRASE',
        'SVC_SIGNATURE',
        'SVC_TIMESTAMP',
      ]);
      expect(headers.SVC_TIMESTAMP).toBe(String((view!.artifact as { timestamp: number }).timestamp));
    },
  );

  it('what the sandbox receives from a page request is exactly the artifact the window showed', async () => {
    const bg = await ready();
    await call(bg, 'clob.createOrDerive', { account: h.demo.owner.address });
    await connect(bg);
    const mark = h.ctx.requestLog.length;
    const p = bg.page(page(SITE)).request('perps_sendCommand', order);
    const [view] = await waitPending(bg);
    bg.registry.decide(view!.id, { approve: true, digest: view!.digest });
    await p;
    const got = h.ctx.requestLog.slice(mark).find((r) => r.path === '/perps/v1/trade/orders')!;
    const { sig: _sig, ...sent } = JSON.parse(got.body!) as Record<string, unknown>;
    expect(sent).toEqual((view!.artifact as { envelope: unknown }).envelope);

    const p2 = bg.page(page(SITE)).request('clob_postOrders', {
      orders: [
        { tokenId: h.ctx.clob.markets[0]!.tokenIds[0], side: 'BUY', price: '0.40', size: '10', orderType: 'GTC' },
      ],
    });
    const [v2] = await waitPending(bg);
    expect(v2!.lines).toEqual([
      expect.stringMatching(/^Buy 10\.00 shares of token .* at 0\.40 \(pay 4\.00 USDC\), good-til-cancelled$/),
    ]);
    bg.registry.decide(v2!.id, { approve: true, digest: v2!.digest });
    await p2;
    const posted = h.ctx.requestLog.slice(mark).find((r) => r.path === '/clob/order')!;
    const body = JSON.parse(posted.body!) as { order: Record<string, unknown> };
    const { signature: _s, ...orderSent } = body.order;
    expect({ ...body, order: orderSent }).toEqual(
      (v2!.artifact as unknown as { orders: { body: unknown }[] }).orders[0]!.body,
    );
  });

  it(
    'an open approval window polling the queue does not keep the ' +
      'vault unlocked: it locks at the deadline and the request gets 4900',
    async () => {
      const bg = await ready();
      await connect(bg);
      const arm = vi.spyOn(fakeBrowser.alarms, 'create');
      const p = bg
        .page(page(SITE))
        .request('perps_sendCommand', order)
        .catch((e) => e);
      await waitPending(bg);
      const approvalWindow = { id: fakeBrowser.runtime.id, url: `${EXT().replace(/\/$/, '')}/approval.html` };
      for (let i = 0; i < 5; i++) {
        expect((await call(bg, 'approval.list', {}, approvalWindow)).ok).toBe(true);
        expect((await call(bg, 'vault.status', {}, popup())).ok).toBe(true);
        expect((await call(bg, 'settings.get', {}, popup())).ok).toBe(true);
      }
      expect(arm).not.toHaveBeenCalled();
      // A person's input in the popup does re-arm it.
      await call(bg, 'session.activity');
      expect(arm).toHaveBeenCalledTimes(1);
      arm.mockRestore();
      await fakeBrowser.alarms.onAlarm.trigger({ name: AUTOLOCK_ALARM, scheduledTime: Date.now() } as Parameters<
        typeof fakeBrowser.alarms.onAlarm.trigger
      >[0]);
      expect(await p).toMatchObject({ code: 4900 });
      expect(((await call(bg, 'vault.status')).result as { unlocked: boolean }).unlocked).toBe(false);
    },
  );

  it(
    'adding a key never changes the active account; only the person ' +
      'switches it, which cancels pending requests and tells sites',
    async () => {
      const bg = await ready();
      const a = h.demo.owner.address;
      const status = async () =>
        (await call(bg, 'vault.status')).result as { activeAccount: string; accounts: { address: string }[] };
      expect((await status()).activeAccount).toBe(a);
      const b = ((await call(bg, 'vault.generateOwnerKey', { label: 'second' })).result as { address: string }).address;
      expect((await status()).activeAccount).toBe(a);
      expect((await status()).accounts).toHaveLength(2);
      const { events } = bg.page(page(SITE));
      await connect(bg);
      const pending = bg
        .page(page(SITE))
        .request('perps_sendCommand', order)
        .catch((e) => e);
      const [view] = await waitPending(bg);
      expect(view!.account).toEqual({ address: a, label: '' });
      events.length = 0;
      expect(((await call(bg, 'account.select', { address: b })).result as { changed: boolean }).changed).toBe(true);
      expect(await pending).toMatchObject({ code: 4001, shortMessage: expect.stringContaining('switched accounts') });
      expect(events).toContainEqual({ event: 'accountsChanged', data: [] });
      expect((await status()).activeAccount).toBe(b);
      // The site was granted account A: while B is active it sees no account and can sign nothing.
      await expect(bg.page(page(SITE)).request('eth_accounts', undefined)).resolves.toEqual([]);
      await expect(bg.page(page(SITE)).request('perps_sendCommand', order)).rejects.toMatchObject({ code: 4100 });
      // The popup cannot trade for A either while B is active.
      expect((await call(bg, 'perps.send', { account: a, op: order.op })).error).toMatchObject({
        name: 'Accounts.NotActiveAccountError',
      });
      // The switch is in the audit log.
      expect(((await call(bg, 'audit.list')).result as { kind: string }[])[0]).toMatchObject({
        kind: 'account.switch',
      });
      events.length = 0;
      await call(bg, 'account.select', { address: a });
      expect(events).toContainEqual({ event: 'accountsChanged', data: [a] });
      await expect(bg.page(page(SITE)).request('eth_accounts', undefined)).resolves.toEqual([a]);
      expect((await call(bg, 'account.select', { address: h.demo.counterparty.address })).error).toMatchObject({
        name: 'Accounts.UnknownAccountError',
      });
    },
  );

  it('a withdraw for another account than the connected one is refused before anything is built', async () => {
    const bg = await ready();
    await connect(bg);
    const err = await bg
      .page(page(SITE))
      .request('perps_sendCommand', {
        op: {
          type: 'withdraw',
          args: {
            account: h.demo.counterparty.address,
            token: h.ctx.config.usdc,
            amount: '1',
            to: h.demo.counterparty.address,
          },
        },
      })
      .catch((e) => e);
    expect(err).toMatchObject({ code: -32602, shortMessage: expect.stringContaining('op.args.account') });
    expect(bg.registry.size).toBe(0);
  });

  it(
    'a standing grant signs requests inside its limits without a window, opens one naming ' +
      'the limit outside, always asks for funds, and is revoked by disconnect and lock',
    async () => {
      const bg = await ready();
      await connect(bg);
      // Offered from the approval window of a first order.
      const first = bg.page(page(SITE)).request('perps_sendCommand', order);
      const [view] = await waitPending(bg);
      expect(view!.grantable).toBe(true);
      const limits = {
        venue: 'perps',
        allow: { order: true, cancel: true, leverage: false },
        instruments: [2],
        maxNotional: '5000',
        dailyNotional: '50000',
        priceBandPct: '5',
      }; // under the caps the offer proposes from the demo equity
      const created = await call(
        bg,
        'grant.create',
        { approvalId: view!.id, limits, minutes: 60 },
        { id: fakeBrowser.runtime.id, url: `${EXT().replace(/\/$/, '')}/approval.html` },
      );
      expect(created.ok).toBe(true);
      expect(badge).toBe('1');
      bg.registry.decide(view!.id, { approve: true, digest: view!.digest });
      await first;
      expect(badge).toBe('ON');
      // Inside the grant: no window, the sandbox verifies every one.
      const before = h.ctx.requestLog.filter((r) => r.path === '/perps/v1/trade/orders' && r.status === 200).length;
      for (let i = 0; i < 5; i++) {
        const acks = (await bg.page(page(SITE)).request('perps_sendCommand', {
          op: {
            type: 'createOrders',
            args: [{ iid: 2, buy: true, qty: '1', p: String(3000 - i), tif: 'gtc', po: true }],
          },
        })) as { status: string }[];
        expect(acks[0]!.status).toBe('ok');
      }
      expect(bg.registry.size).toBe(0);
      expect(
        h.ctx.requestLog.filter((r) => r.path === '/perps/v1/trade/orders' && r.status === 200).length - before,
      ).toBe(5);
      expect(((await call(bg, 'audit.list')).result as { summary: string }[])[0]!.summary).toContain(
        '(standing permission)',
      );
      // Outside: a window that names the limit.
      const over = bg
        .page(page(SITE))
        .request('perps_sendCommand', {
          op: { type: 'createOrders', args: [{ iid: 1, buy: true, qty: '0.01', p: '60000', tif: 'gtc', po: true }] },
        })
        .catch((e) => e);
      const [v2] = await waitPending(bg);
      expect(v2!.flags).toContain(
        'Outside your standing permission for this site: instrument #1 is not in this permission.',
      );
      bg.registry.decide(v2!.id, { approve: false });
      expect(await over).toMatchObject({ code: 4001 });
      // Funds always ask.
      const w = bg
        .page(page(SITE))
        .request('perps_sendCommand', {
          op: {
            type: 'withdraw',
            args: { account: h.demo.owner.address, token: h.ctx.config.usdc, amount: '1', to: h.demo.owner.address },
          },
        })
        .catch((e) => e);
      const [v3] = await waitPending(bg);
      expect(v3!.flags).toContain(
        'Outside your standing permission for this site: A withdrawal always needs your approval.',
      );
      expect(v3!.grantable).toBe(false);
      bg.registry.decide(v3!.id, { approve: false });
      await w;
      // Disconnect revokes; so does lock.
      expect(((await call(bg, 'grant.list')).result as unknown[]).length).toBe(1);
      await bg.page(page(SITE)).request('wallet_revokePermissions', undefined);
      expect(((await call(bg, 'grant.list')).result as unknown[]).length).toBe(0);
      await connect(bg);
      const again = bg.page(page(SITE)).request('perps_sendCommand', order);
      const [v4] = await waitPending(bg);
      await call(bg, 'grant.create', { approvalId: v4!.id, limits, minutes: 60 });
      bg.registry.decide(v4!.id, { approve: true, digest: v4!.digest });
      await again;
      expect(((await call(bg, 'grant.list')).result as unknown[]).length).toBe(1);
      await call(bg, 'vault.lock');
      expect(await grantUseRecords(bg.vault()).deleteAllGrants()).toBe(0);
      expect(badge).toBe('');
    },
  );

  it('refuses a grant for a request id that is not pending, and one longer than 24 h', async () => {
    const bg = await ready();
    await connect(bg);
    const limits = {
      venue: 'perps',
      instruments: [2],
      allow: { order: true, cancel: true, leverage: false },
      maxNotional: '2000',
      dailyNotional: '20000',
      priceBandPct: '2',
    };
    expect((await call(bg, 'grant.create', { approvalId: 'nope', limits, minutes: 60 })).error).toMatchObject({
      name: 'Approvals.NotFoundError',
    });
    const p = bg
      .page(page(SITE))
      .request('perps_sendCommand', order)
      .catch((e) => e);
    const [v] = await waitPending(bg);
    expect((await call(bg, 'grant.create', { approvalId: v!.id, limits, minutes: 24 * 60 + 1 })).ok).toBe(false);
    bg.registry.decide(v!.id, { approve: false });
    await p;
  });
});
