/**
 * The background is the boundary: every rule a screen shows is held by the procedure that changes the
 * state. These tests call the procedures directly, as a buggy or compromised extension page would, in
 * orders and with values the popup and the approval window never use, and check that the refusal names
 * the field and changes nothing (no record written or removed, nothing signed or sent).
 */
import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { startBackground } from './index';
import type { Harness } from '../../test/kits/sandbox';
import {
  BOUNDS,
  browser,
  btcOnly,
  callAs,
  KDF,
  pagePathKit,
  pageSender,
  sandboxSuite,
  until,
  waitPending,
  withPages,
  type Reply,
} from '../../test/kits/background';

const SITE = 'https://boundary.example';
const page = pageSender(SITE, 41);
let h!: Harness;
const started = sandboxSuite((x) => (h = x));
const kit = pagePathKit({ harness: () => h, started, site: SITE, page, dbPrefix: 'procedure-boundary' });
const { call, owner, ready } = kit;

type ProxyRow = { account: string; proxy: string };
const proxies = async (bg: Parameters<typeof call>[0]) =>
  ((await call(bg, 'proxy.list', {})).result as ProxyRow[])
    .map((p) => `${p.account.toLowerCase()}:${p.proxy.toLowerCase()}`)
    .sort();
const sentTo = (wire: { sent: { url: string; method: string }[] }, method: string, path: RegExp) =>
  wire.sent.filter((s) => s.method === method && path.test(s.url)).length;

describe('proxy keys: what must exist before a key is signed for, stored or removed', () => {
  it(
    "a proxy delete naming another account's proxy key, or a key the " +
      'vault does not hold, signs and sends nothing, and every key stays',
    async () => {
      const { bg, wire } = await ready();
      const b = privateKeyToAccount(generatePrivateKey());
      expect((await call(bg, 'vault.importOwnerKey', { privateKey: generatePrivateKey() })).ok).toBe(true);
      const bKey = generatePrivateKey();
      const B = (await call(bg, 'vault.importOwnerKey', { privateKey: bKey, label: 'B' })).result as {
        address: string;
      };
      const bProxyKey = generatePrivateKey();
      const bProxy = privateKeyToAccount(bProxyKey).address;
      expect(
        (
          await call(bg, 'proxy.import', {
            account: B.address,
            privateKey: bProxyKey,
            proxy: bProxy,
            secret: 's3cret',
            expiry: Date.now() + 86_400_000,
          })
        ).ok,
      ).toBe(true);
      const before = await proxies(bg);
      const sent = sentTo(wire, 'DELETE', /\/v1\/account\/proxy$/);

      for (const proxy of [bProxy, b.address]) {
        const r = await call(bg, 'proxy.delete', { account: owner(), proxy });
        expect(r.ok, proxy).toBe(false);
        expect(r.error).toMatchObject({
          name: 'InvalidFieldError',
          shortMessage: expect.stringContaining('Invalid proxy'),
        });
      }
      expect(sentTo(wire, 'DELETE', /\/v1\/account\/proxy$/) - sent).toBe(0);
      expect(await proxies(bg)).toEqual(before);
    },
    30_000,
  );

  it(
    'a proxy import for an address the vault holds no owner key of, or re-filing ' +
      "another account's proxy key under this one, is refused and changes nothing",
    async () => {
      const { bg } = await ready();
      const B = (await call(bg, 'vault.importOwnerKey', { privateKey: generatePrivateKey(), label: 'B' })).result as {
        address: string;
      };
      const before = await proxies(bg);
      const stranger = privateKeyToAccount(generatePrivateKey()).address;
      const k = generatePrivateKey();
      const noOwner = await call(bg, 'proxy.import', {
        account: stranger,
        privateKey: k,
        proxy: privateKeyToAccount(k).address,
        secret: 'x',
        expiry: Date.now() + 86_400_000,
      });
      expect(noOwner).toMatchObject({
        ok: false,
        error: { name: 'InvalidFieldError', shortMessage: expect.stringContaining('Invalid account') },
      });
      // The demo account's proxy key, filed under B: A would lose its key.
      const moved = await call(bg, 'proxy.import', {
        account: B.address,
        privateKey: h.demo.proxy.privateKey,
        proxy: h.demo.proxy.address,
        secret: h.demo.proxy.secret,
        expiry: h.demo.proxy.expiry,
      });
      expect(moved).toMatchObject({
        ok: false,
        error: { name: 'InvalidFieldError', shortMessage: expect.stringContaining('Invalid proxy') },
      });
      expect(await proxies(bg)).toEqual(before);
    },
    30_000,
  );

  it(
    'a proxy issue whose expiry is not in the future, or beyond ' +
      'the 180 days the venue keeps a proxy, signs and sends nothing',
    async () => {
      const { bg, wire } = await ready();
      const before = await proxies(bg);
      const sent = sentTo(wire, 'POST', /\/v1\/account\/proxy$/);
      const day = 86_400_000;
      for (const expiry of [0, Date.now() - 1000, Date.now() + 181 * day, Number.MAX_SAFE_INTEGER]) {
        const r = await call(bg, 'proxy.issue', { account: owner(), expiry });
        expect(r, String(expiry)).toMatchObject({
          ok: false,
          error: { name: 'InvalidFieldError', shortMessage: expect.stringContaining('Invalid expiry') },
        });
      }
      expect(sentTo(wire, 'POST', /\/v1\/account\/proxy$/) - sent).toBe(0);
      expect(await proxies(bg)).toEqual(before);
      // At the bound it is issued.
      expect((await call(bg, 'proxy.issue', { account: owner(), expiry: Date.now() + 179 * day })).ok).toBe(true);
    },
    30_000,
  );
});

describe('a locked vault', () => {
  it(
    'refuses a backup restore: the locked vault is not ' + 'replaced by another one, and opens with its own password',
    async () => {
      const attacker = startBackground({
        browser,
        dbName: `procedure-boundary-attacker-${Math.random()}`,
        kdf: KDF,
        bounds: BOUNDS,
      });
      expect(((await callAs(attacker, 'vault.create', { password: 'the attacker password' })) as Reply).ok).toBe(true);
      await callAs(attacker, 'vault.importOwnerKey', { privateKey: generatePrivateKey() });
      const backup = (((await callAs(attacker, 'vault.exportBackup')) as Reply).result as { backup: string }).backup;
      await callAs(attacker, 'vault.lock');

      const bg = withPages(
        startBackground({ browser, dbName: `procedure-boundary-victim-${Math.random()}`, kdf: KDF, bounds: BOUNDS }),
      );
      started.push(bg);
      await call(bg, 'vault.create', { password: 'a good password' });
      const mine = (await call(bg, 'vault.importOwnerKey', { privateKey: generatePrivateKey() })).result as {
        address: string;
      };
      await call(bg, 'vault.lock');
      const r = await call(bg, 'vault.restoreBackup', { backup, password: 'the attacker password' });
      expect(r).toMatchObject({ ok: false, error: { name: 'Vault.LockedError', code: 4900 } });
      expect((await call(bg, 'vault.status')).result).toMatchObject({ state: 'locked' });
      expect((await call(bg, 'vault.unlock', { password: 'a good password' })).ok).toBe(true);
      expect(((await call(bg, 'vault.accounts')).result as { address: string }[]).map((a) => a.address)).toEqual([
        mine.address,
      ]);
      // Unlocked, the person may replace the vault.
      expect((await call(bg, 'vault.restoreBackup', { backup, password: 'the attacker password' })).ok).toBe(true);
    },
    30_000,
  );
});

describe('standing grants: what the window offers is the most a grant may hold', () => {
  it(
    'caps above the equity-based proposal are refused, whether or ' +
      'not the offer was asked; at the proposal the grant is made',
    async () => {
      const { bg } = await ready();
      const order = bg.page(page).request('perps_sendCommand', await kit.btcOrder());
      order.catch(() => undefined);
      const [w] = await waitPending(bg);
      // No offer asked first (a page that skips the window's form): the background reads it itself.
      const huge = await call(bg, 'grant.create', {
        approvalId: w!.id,
        limits: { ...btcOnly, maxNotional: '1000000000', dailyNotional: '1000000000' },
        minutes: 60,
      });
      expect(huge).toMatchObject({
        ok: false,
        error: { name: 'Grants.LimitsError', shortMessage: expect.stringContaining('limits.maxNotional') },
      });
      const offer = (await call(bg, 'grant.offer', { approvalId: w!.id })).result as {
        proposal: { maxNotional: string; dailyNotional: string };
      };
      expect(offer.proposal.maxNotional).toBeDefined();
      const above = (x: string) => (Number(x) + 0.01).toFixed(2);
      const daily = await call(bg, 'grant.create', {
        approvalId: w!.id,
        limits: {
          ...btcOnly,
          maxNotional: offer.proposal.maxNotional,
          dailyNotional: above(offer.proposal.dailyNotional),
        },
        minutes: 60,
      });
      expect(daily).toMatchObject({
        ok: false,
        error: { name: 'Grants.LimitsError', shortMessage: expect.stringContaining('limits.dailyNotional') },
      });
      expect((await call(bg, 'grant.list')).result).toEqual([]);
      const atBound = await call(bg, 'grant.create', {
        approvalId: w!.id,
        limits: { ...btcOnly, maxNotional: offer.proposal.maxNotional, dailyNotional: offer.proposal.dailyNotional },
        minutes: 60,
      });
      expect(atBound.ok, JSON.stringify(atBound)).toBe(true);
      kit.closeAll(bg);
    },
    30_000,
  );

  it(
    'a grant whose window was ended by a lock while its ' + 'reads were under way is not made, even after the unlock',
    async () => {
      const { bg } = await ready();
      const order = bg.page(page).request('perps_sendCommand', await kit.btcOrder());
      order.catch(() => undefined);
      const [w] = await waitPending(bg);
      // Every venue read the grant's creation makes waits until the lock and the unlock are done.
      const reads = bg.reads() as unknown as { perpsRead: (...a: unknown[]) => Promise<unknown> };
      const real = reads.perpsRead.bind(reads);
      let held = 0;
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      reads.perpsRead = async (...a: unknown[]) => {
        held++;
        await gate;
        return real(...a);
      };
      const created = call(bg, 'grant.create', { approvalId: w!.id, limits: btcOnly, minutes: 60 });
      await until(() => held > 0);
      expect((await call(bg, 'vault.lock')).ok).toBe(true);
      expect((await call(bg, 'vault.unlock', { password: 'a good password' })).ok).toBe(true);
      release();
      expect(await created).toMatchObject({ ok: false, error: { code: 4900 } });
      expect((await call(bg, 'grant.list')).result).toEqual([]);
      reads.perpsRead = real;
    },
    30_000,
  );
});
