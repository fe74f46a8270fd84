/**
 * Secrets and signatures travel only over encrypted transports, and the background holds the rule
 * whatever page calls it: a service URL in clear is refused when saved and, when already stored (an older
 * profile, a restored backup, a database written outside Countersign), refused at use with words that
 * say why — no signature, no request, no socket. A release build refuses loopback in clear too. The host
 * permissions a venue needs are a precondition `settings.set` checks; a release creates no vault before a
 * venue is chosen. A person whose settings ever named a service in clear is told what may have travelled
 * and offered the rotation that makes it worthless. The real background on the fake browser, its gateway
 * requests and WebSockets recorded, against the in-process sandbox.
 */
import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import { privateKeyToAccount } from 'viem/accounts';
import { readSettings } from '../settings';
import { startBackground } from './index';
import {
  BOUNDS,
  browser,
  callAs,
  KDF,
  markPrice,
  recordingFetch,
  recordingWebSocket,
  sleep,
  useSandboxBackgrounds,
  withPages,
  type PagedBackground,
  type Reply,
} from '../../test/kits/background';
import type { SentRequest } from '../../test/kits/background';
import type { Harness } from '../../test/kits/sandbox';

let h: Harness;
const kit = useSandboxBackgrounds({ dbPrefix: 'transport-rule', onStart: (x) => (h = x) });
const RELEASE = { loopbackCleartext: false };
const ws = recordingWebSocket();

/** A background on the sandbox, its gateway requests in `log.sent`; `o.release`: a release build's transport rule. */
async function start(o: { release?: boolean } = {}) {
  const log: { sent: SentRequest[] } = { sent: [] };
  ws.reset();
  const bg = await kit.start({
    fetchFn: recordingFetch(log),
    WebSocket: ws.WebSocket,
    ...(o.release ? { transportRule: RELEASE } : {}),
  });
  return { log, bg };
}

/** A background on a fake browser whose `permissions.contains` answers `granted()`. */
function startWithPermissions(granted: () => boolean, o: { release?: boolean } = {}): PagedBackground {
  const withPermissions = { ...browser, permissions: { contains: async () => granted() } };
  return withPages(
    startBackground({
      browser: withPermissions,
      dbName: `transport-rule-perm-${Math.random()}`,
      kdf: KDF,
      bounds: BOUNDS,
      ...(o.release ? { transportRule: RELEASE } : {}),
    }),
  );
}

/**
 * Onboards the demo account on the sandbox's loopback URLs (a development build's defaults, moved to the test sandbox).
 */
async function onboard(bg: PagedBackground): Promise<void> {
  const owner = h.demo.owner.address;
  expect(((await callAs(bg, 'vault.create', { password: 'a good password' })) as Reply).ok).toBe(true);
  expect(
    (
      (await callAs(bg, 'settings.set', {
        perpsUrl: h.perps,
        perpsWsUrl: `${h.url.replace(/^http/, 'ws')}/perps/v1/ws`,
        clobUrl: h.clobUrl,
        clobWsUrl: `${h.url.replace(/^http/, 'ws')}/clob/ws`,
        gammaUrl: `${h.url}/gamma`,
        dataUrl: `${h.url}/data`,
      })) as Reply
    ).ok,
  ).toBe(true);
  await callAs(bg, 'vault.importOwnerKey', { privateKey: h.demo.owner.privateKey });
  await callAs(bg, 'proxy.import', {
    account: owner,
    privateKey: h.demo.proxy.privateKey,
    proxy: h.demo.proxy.address,
    secret: h.demo.proxy.secret,
    expiry: h.demo.proxy.expiry,
  });
}

/**
 * Writes `patch` into the stored settings as an older profile or a restored backup would (no procedure), then makes the
 * background read them again.
 */
async function storeBehindTheBackground(bg: PagedBackground, patch: Record<string, unknown>): Promise<void> {
  const db = bg.db();
  const current = await readSettings(db);
  await db.put('settings', { version: 4, values: { ...current, ...patch } }, 'prefs');
  // a save that names no service: the cache is read again
  expect(((await callAs(bg, 'settings.set', { theme: 'dark' })) as Reply).ok).toBe(true);
}

const order = async () => ({
  account: h.demo.owner.address,
  op: {
    type: 'createOrders',
    args: [{ iid: 1, buy: true, qty: '0.01', p: await markPrice(h, 1), tif: 'gtc', po: true }],
  },
});

describe('secrets and signatures travel only over encrypted transports', () => {
  it('a service URL in clear off loopback is refused when saved, naming the field; nothing is stored', async () => {
    const { bg } = await start();
    await onboard(bg);
    for (const [field, url] of [
      ['perpsUrl', 'http://gateway.example/perps'],
      ['perpsWsUrl', 'ws://gateway.example/v1/ws'],
      ['clobUrl', 'http://10.0.0.8/clob'],
      ['relayerUrl', 'http://relayer.example'],
      ['rpcUrl', 'http://rpc.example'],
    ] as const) {
      const r = (await callAs(bg, 'settings.set', { [field]: url })) as Reply;
      expect(r.ok, field).toBe(false);
      expect(r.error?.name).toBe('Http.InsecureTransportError');
      expect(r.error?.shortMessage).toContain(url);
      expect(r.error?.code).toBe(4100);
    }
    // A preset edit that moves one field into clear is refused whole, and the https form of the same host is taken.
    expect((await readSettings(bg.db())).perpsUrl).toBe(h.perps);
    expect(((await callAs(bg, 'settings.set', { perpsUrl: 'https://gateway.example/perps' })) as Reply).ok).toBe(true);
  });

  it(
    'a perps URL in clear already stored signs and sends nothing: the order is refused naming ' +
      'the setting, and Settings names what may have travelled until the person clears it',
    async () => {
      const { bg, log } = await start();
      await onboard(bg);
      await storeBehindTheBackground(bg, {
        perpsUrl: 'http://gateway.example/perps',
        clobUrl: 'http://gateway.example/clob',
      });
      log.sent.length = 0;
      const r = (await callAs(bg, 'perps.send', await order())) as Reply;
      expect(r.ok).toBe(false);
      expect(r.error).toMatchObject({ name: 'Http.InsecureTransportError', code: 4100 });
      expect(r.error?.shortMessage).toContain('perps gateway URL http://gateway.example/perps');
      const clob = (await callAs(bg, 'clob.createOrDerive', { account: h.demo.owner.address })) as Reply;
      expect(clob.error?.name).toBe('Http.InsecureTransportError');
      expect(log.sent.filter((s) => s.url.startsWith('http://gateway.example'))).toEqual([]);

      const got = (await callAs(bg, 'settings.get')) as Reply & {
        result: { insecure: { field: string }[]; cleartext: { field: string; secrets: string; rotate?: string }[] };
      };
      expect(got.result.insecure.map((i) => i.field)).toEqual(['perpsUrl', 'clobUrl']);
      expect(got.result.cleartext).toMatchObject([
        {
          field: 'perpsUrl',
          url: 'http://gateway.example/perps',
          rotate: 'proxy',
          secrets: expect.stringContaining('proxy keys'),
        },
        {
          field: 'clobUrl',
          url: 'http://gateway.example/clob',
          rotate: 'clob',
          secrets: expect.stringContaining('API key, secret and passphrase'),
        },
      ]);
      // Fixed in Settings: the URLs are used again; the record of what was named in clear stays until the person clears
      // it.
      expect(((await callAs(bg, 'settings.set', { perpsUrl: h.perps, clobUrl: h.clobUrl })) as Reply).ok).toBe(true);
      expect(((await callAs(bg, 'settings.get')) as typeof got).result).toMatchObject({
        insecure: [],
        cleartext: [{ field: 'perpsUrl' }, { field: 'clobUrl' }],
      });
      expect(((await callAs(bg, 'settings.clearCleartext')) as Reply).ok).toBe(true);
      expect(((await callAs(bg, 'settings.get')) as typeof got).result.cleartext).toEqual([]);
    },
  );

  it('the streams open no WebSocket to a URL in clear', async () => {
    const { bg } = await start();
    await onboard(bg);
    await storeBehindTheBackground(bg, {
      perpsWsUrl: 'ws://gateway.example/v1/ws',
      clobWsUrl: 'ws://gateway.example/ws',
    });
    ws.reset();
    await callAs(bg, 'streams.watch', { perpsIid: 1 });
    await sleep(300);
    expect(ws.log.sockets.map((s) => s.url)).toEqual([]);
    // The same watch on the stored loopback URL does open the feed: the refusal is the URL's, not the watch's.
    await storeBehindTheBackground(bg, { perpsWsUrl: `${h.url.replace(/^http/, 'ws')}/perps/v1/ws` });
    await callAs(bg, 'streams.watch', { perpsIid: 1 });
    for (let i = 0; i < 50 && ws.log.sockets.length === 0; i++) await sleep(20);
    expect(ws.log.sockets.length).toBeGreaterThan(0);
  });

  it(
    'a release refuses loopback in clear: the sandbox preset is ' +
      'refused when saved, and stored sandbox URLs sign and send nothing',
    async () => {
      const { bg, log } = await start({ release: true });
      expect(((await callAs(bg, 'vault.create', { password: 'a good password' })) as Reply).ok).toBe(true);
      const saved = (await callAs(bg, 'settings.set', { preset: 'sandbox' })) as Reply;
      expect(saved.error?.name).toBe('Http.InsecureTransportError');
      expect(saved.error?.shortMessage).toMatch(/loopback.*only a development build/);
      await callAs(bg, 'vault.importOwnerKey', { privateKey: h.demo.owner.privateKey });
      await callAs(bg, 'proxy.import', {
        account: h.demo.owner.address,
        privateKey: h.demo.proxy.privateKey,
        proxy: h.demo.proxy.address,
        secret: h.demo.proxy.secret,
        expiry: h.demo.proxy.expiry,
      });
      await storeBehindTheBackground(bg, { perpsUrl: h.perps, clobUrl: h.clobUrl });
      log.sent.length = 0;
      const r = (await callAs(bg, 'perps.send', await order())) as Reply;
      expect(r.error?.name).toBe('Http.InsecureTransportError');
      const read = (await callAs(bg, 'perps.read', { account: h.demo.owner.address, name: 'portfolio' })) as Reply;
      expect(read.ok).toBe(false);
      expect(log.sent).toEqual([]);
    },
  );
});

describe('the background holds the venue rules whatever page calls it', () => {
  it('a venue is stored only when the browser granted its hosts; nothing is stored otherwise', async () => {
    let granted = false;
    const bg = startWithPermissions(() => granted);
    await bg.ready;
    const refused = (await callAs(bg, 'settings.set', { preset: 'polymarket' })) as Reply;
    expect(refused.error?.name).toBe('Settings.HostsNotGrantedError');
    expect(refused.error?.shortMessage).toContain('https://clob.polymarket.com/*');
    expect((await readSettings(bg.db())).preset).toBe('sandbox');
    granted = true;
    expect(((await callAs(bg, 'settings.set', { preset: 'polymarket' })) as Reply).ok).toBe(true);
    expect(await readSettings(bg.db())).toMatchObject({ preset: 'polymarket', venueChosen: true });
    // The theme needs no host.
    granted = false;
    expect(((await callAs(bg, 'settings.set', { theme: 'light' })) as Reply).ok).toBe(true);
    await callAs(bg, 'vault.lock').catch(() => undefined);
  });

  it("a release's first run creates no vault before a venue is chosen, and no page can say one was", async () => {
    const bg = startWithPermissions(() => true, { release: true });
    await bg.ready;
    await bg.db().put('settings', { version: 4, values: { venueChosen: false } }, 'prefs'); // a release's fresh profile
    expect(
      ((await callAs(bg, 'vault.status')) as Reply & { result: { venueChosen: boolean } }).result.venueChosen,
    ).toBe(false);
    const early = (await callAs(bg, 'vault.create', { password: 'a good password' })) as Reply;
    expect(early.error).toMatchObject({ name: 'Settings.VenueNotChosenError', code: 4100 });
    const restore = (await callAs(bg, 'vault.restoreBackup', { backup: '{}', password: 'a good password' })) as Reply;
    expect(restore.error?.name).toBe('Settings.VenueNotChosenError');
    expect(((await callAs(bg, 'settings.set', { venueChosen: true })) as Reply).ok).toBe(false);
    expect(((await callAs(bg, 'settings.set', { theme: 'dark' })) as Reply).ok).toBe(true);
    expect(((await callAs(bg, 'vault.create', { password: 'a good password' })) as Reply).ok).toBe(false);
    expect(
      ((await callAs(bg, 'vault.status')) as Reply & { result: { initialized: boolean } }).result.initialized,
    ).toBe(false);
    expect(((await callAs(bg, 'settings.set', { preset: 'preproduction' })) as Reply).ok).toBe(true);
    expect(((await callAs(bg, 'vault.create', { password: 'a good password' })) as Reply).ok).toBe(true);
    await callAs(bg, 'vault.lock');
  });

  it('a venue not chosen signs nothing, whatever stored it', async () => {
    const { bg, log } = await start();
    await onboard(bg);
    await storeBehindTheBackground(bg, { venueChosen: false });
    log.sent.length = 0;
    const r = (await callAs(bg, 'perps.send', await order())) as Reply;
    expect(r.error?.name).toBe('Settings.VenueNotChosenError');
    expect(log.sent.filter((s) => s.method !== 'GET')).toEqual([]);
  });
});

describe('what may have travelled in clear is rotated', () => {
  it(
    'order-book credentials rotate: the old API key is deleted ' +
      'at the exchange and stops working, and the new ones sign',
    async () => {
      const { bg } = await start();
      await onboard(bg);
      const owner = h.demo.owner.address;
      expect(((await callAs(bg, 'clob.createOrDerive', { account: owner })) as Reply).ok).toBe(true);
      const before = [...h.ctx.clob.creds.values()]
        .filter((c) => c.address.toLowerCase() === owner.toLowerCase())
        .map((c) => c.apiKey);
      expect(before).toHaveLength(1);
      const r = (await callAs(bg, 'clob.rotateCredentials', { account: owner })) as Reply & {
        result: { nonce: number; oldDeleted: boolean };
      };
      expect(r.result).toMatchObject({ nonce: 1, oldDeleted: true });
      const after = [...h.ctx.clob.creds.values()]
        .filter((c) => c.address.toLowerCase() === owner.toLowerCase())
        .map((c) => c.apiKey);
      expect(after).toHaveLength(1);
      expect(after[0]).not.toBe(before[0]);
      // The new credentials sign the account's reads.
      expect(((await callAs(bg, 'clob.openOrders', { account: owner })) as Reply).ok).toBe(true);
      expect(privateKeyToAccount(h.demo.owner.privateKey).address).toBe(owner);
    },
  );
});
