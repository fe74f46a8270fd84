/**
 * Connection and permission requests, as a page uses them and as a malicious page tries them:
 * `eth_requestAccounts` on a locked vault (unlock, then the connection; one window for a storm of calls),
 * EIP-2255 permission methods and ERC-7715 `wallet_grantPermissions` (type spoofs, unknown fields,
 * wider-than-shown grants). The real background on the fake browser against the in-process sandbox
 * (test/kits/grants.ts).
 */
import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import { fakeBrowser } from 'wxt/testing/fake-browser';
import { AUTOLOCK_ALARM } from '../background/index';
import { describeGrant } from '../grants/evaluate';
import {
  SITE,
  page,
  call,
  owner,
  trading,
  ready,
  waitPending,
  btcOnly,
  mark,
  BTC,
  grant,
  grantSuite,
  type Bg,
} from '../../test/kits/grants';
import type { AccountsPermission } from './permissions';
import { parseCall } from './methods';
import { checkGrantPermissions, GRANT_PERMISSION_TYPE } from './params';

/**
 * `wallet_grantPermissions` params as the page path reads them: parsed once (`parseCall`), then checked for the
 * account, chain and clock.
 */
function parseGrantPermissions(
  params: unknown,
  o: { account: string; chainId: number; now: number },
): ReturnType<typeof checkGrantPermissions> {
  return checkGrantPermissions(parseCall('wallet_grantPermissions', params).params, o);
}

grantSuite('permissions');

const inAnHour = () => Math.floor(Date.now() / 1000) + 3600;
const grantRequest = (data: object, extra: object = {}) => [
  { expiry: inAnHour(), permissions: [{ type: GRANT_PERMISSION_TYPE, data, policies: [] }], ...extra },
];
const settle = <T>(p: Promise<T>) =>
  p.then(
    (r) => ({ ok: true as const, r }),
    (e: { code?: number; message?: string }) => ({ ok: false as const, code: e.code, message: e.message }),
  );
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A ready background whose vault is then locked (the site stays connected). */
async function lockedBg(): Promise<Bg> {
  const bg = await ready();
  await call(bg, 'vault.lock');
  return bg;
}

describe('eth_requestAccounts on a locked vault', () => {
  it(
    'opens one approval that waits for the unlock; five ' + 'calls at once share it and all resolve with the account',
    async () => {
      const bg = await lockedBg();
      await bg
        .page(page)
        .request('wallet_revokePermissions', [{ eth_accounts: {} }])
        .catch(() => undefined);
      const calls = Array.from({ length: 5 }, () => settle(bg.page(page).request('eth_requestAccounts', undefined)));
      const [view] = await waitPending(bg);
      await sleep(50);
      expect(bg.registry.size, 'one pending request, one window').toBe(1);
      expect(view!.flags.join(' ')).toMatch(/locked when this site asked: unlock first/);
      expect((await call(bg, 'vault.unlock', { password: 'a good password' })).ok).toBe(true);
      bg.registry.decide(view!.id, { approve: true, digest: view!.digest });
      for (const r of await Promise.all(calls)) expect(r).toEqual({ ok: true, r: [owner()] });
    },
  );

  it(
    'an approval that reaches a still-locked vault connects ' + 'nothing (4900); closing the window answers 4001',
    async () => {
      const bg = await lockedBg();
      const first = settle(bg.page(page).request('eth_requestAccounts', undefined));
      const [view] = await waitPending(bg);
      bg.registry.decide(view!.id, { approve: true, digest: view!.digest });
      expect(await first).toMatchObject({ ok: false, code: 4900 });
      const second = settle(bg.page(page).request('eth_requestAccounts', undefined));
      const [again] = await waitPending(bg);
      bg.registry.decide(again!.id, { approve: false });
      expect(await second).toMatchObject({ ok: false, code: 4001 });
      expect(await bg.page(page).request('eth_accounts', undefined)).toEqual([]);
    },
  );

  it(
    'attack: a storm of 200 calls from a page, and 5 more sites, ' +
      'on a locked vault: one pending request per site, no -32002',
    async () => {
      const bg = await lockedBg();
      const storm = Array.from({ length: 200 }, () => settle(bg.page(page).request('eth_requestAccounts', undefined)));
      const others = ['https://a.example', 'https://b.example'].map((o) =>
        settle(
          bg.page({ ...page, url: `${o}/`, tab: { id: 9, url: `${o}/` } }).request('eth_requestAccounts', undefined),
        ),
      );
      await waitPending(bg, 3);
      await sleep(50);
      expect(bg.registry.size).toBe(3);
      bg.registry.rejectAll(() => Object.assign(new Error('closed'), { code: 4001, shortMessage: 'closed' }) as never);
      const results = await Promise.all([...storm, ...others]);
      expect(results.every((r) => !r.ok && r.code !== -32002)).toBe(true);
    },
  );
});

describe('EIP-2255 wallet_getPermissions / wallet_requestPermissions / wallet_revokePermissions', () => {
  it(
    'a connected site has the eth_accounts permission with ' + 'the restrictReturnedAccounts caveat; revoke ends it',
    async () => {
      const bg = await ready();
      const perms = (await bg.page(page).request('wallet_getPermissions', [])) as AccountsPermission[];
      expect(perms).toEqual([
        {
          invoker: SITE,
          parentCapability: 'eth_accounts',
          caveats: [{ type: 'restrictReturnedAccounts', value: [owner()] }],
          date: expect.any(Number),
        },
      ]);
      await call(bg, 'vault.lock');
      expect(await bg.page(page).request('wallet_getPermissions', []), 'agrees with eth_accounts while locked').toEqual(
        [],
      );
      await call(bg, 'vault.unlock', { password: 'a good password' });
      await bg.page(page).request('wallet_revokePermissions', [{ eth_accounts: {} }]);
      expect(await bg.page(page).request('wallet_getPermissions', [])).toEqual([]);
      expect(await bg.page(page).request('eth_accounts', [])).toEqual([]);
    },
  );

  it(
    'in a trading session only a site holding a grant has its permission ' +
      '(as eth_accounts): another connected site has none, and cannot ask',
    async () => {
      const bg = await ready();
      const other = { ...page, url: 'https://other.example/', tab: { id: 7, url: 'https://other.example/' } };
      const connecting = bg.page(other).request('eth_requestAccounts', undefined);
      const [view] = await waitPending(bg);
      bg.registry.decide(view!.id, { approve: true, digest: view!.digest });
      await connecting;
      await grant(bg, btcOnly);
      await fakeBrowser.alarms.onAlarm.trigger({ name: AUTOLOCK_ALARM, scheduledTime: Date.now() } as Parameters<
        typeof fakeBrowser.alarms.onAlarm.trigger
      >[0]);
      for (
        let i = 0;
        i < 200 && ((await call(bg, 'vault.status')).result as { state: string }).state !== 'session';
        i++
      )
        await sleep(5);
      expect(await bg.page(page).request('wallet_getPermissions', [])).toHaveLength(1);
      expect(await bg.page(other).request('eth_accounts', [])).toEqual([]);
      expect(await bg.page(other).request('wallet_getPermissions', [])).toEqual([]);
      expect(await settle(bg.page(other).request('wallet_requestPermissions', [{ eth_accounts: {} }]))).toMatchObject({
        ok: false,
        code: 4900,
      });
      expect(bg.registry.size).toBe(0);
      await call(bg, 'vault.lock'); // ends the session (its kill-switch renewals stop)
    },
  );

  it('wallet_requestPermissions asks even when connected and answers the permissions', async () => {
    const bg = await ready();
    const p = bg.page(page).request('wallet_requestPermissions', [{ eth_accounts: {} }]);
    const [view] = await waitPending(bg);
    expect(view!.kind).toBe('connect');
    // eth_requestAccounts of the connected site does not wait behind it.
    expect(await bg.page(page).request('eth_requestAccounts', undefined)).toEqual([owner()]);
    bg.registry.decide(view!.id, { approve: true, digest: view!.digest });
    expect(await p).toEqual([
      {
        invoker: SITE,
        parentCapability: 'eth_accounts',
        caveats: [{ type: 'restrictReturnedAccounts', value: [owner()] }],
        date: expect.any(Number),
      },
    ]);
  });

  it(
    'refuses any permission but eth_accounts, and caveats the ' +
      'page chose, naming the field (-32602, nothing pending)',
    async () => {
      const bg = await ready();
      for (const [params, field] of [
        [[{ eth_accounts: {}, [GRANT_PERMISSION_TYPE]: {} }], `params.${GRANT_PERMISSION_TYPE}`],
        [
          [
            {
              eth_accounts: {
                caveats: [{ type: 'restrictReturnedAccounts', value: ['0x0000000000000000000000000000000000000001'] }],
              },
            },
          ],
          'params.eth_accounts.caveats',
        ],
        [[{}], 'params.eth_accounts'],
      ] as const) {
        const r = await settle(bg.page(page).request('wallet_requestPermissions', params));
        expect(r).toMatchObject({ ok: false, code: -32602 });
        expect(r.ok ? '' : r.message).toContain(field);
      }
      expect(bg.registry.size).toBe(0);
    },
  );

  it('attack: a requestPermissions flood opens one window', async () => {
    const bg = await ready();
    const flood = Array.from({ length: 30 }, () =>
      settle(bg.page(page).request('wallet_requestPermissions', [{ eth_accounts: {} }])),
    );
    await waitPending(bg);
    await sleep(50);
    expect(bg.registry.size).toBe(1);
    const [view] = bg.registry.list();
    bg.registry.decide(view!.id, { approve: false });
    expect((await Promise.all(flood)).every((r) => !r.ok && r.code === 4001)).toBe(true);
  });
});

describe('ERC-7715 wallet_grantPermissions (countersign-grant)', () => {
  it(
    'shows the grant in the words of every grant, creates ' + 'exactly it on approval, and answers the ERC-7715 shape',
    async () => {
      const bg = await ready();
      const p = settle(bg.page(page).request('wallet_grantPermissions', grantRequest(btcOnly)));
      const [view] = await waitPending(bg);
      expect(view!.kind).toBe('grant');
      expect(view!.lines[0]).toMatch(/^Perps venue only: BTC-PERP \(#1\)\.$/);
      expect(view!.lines).toEqual(
        describeGrant({
          ...parseGrantPermissions(grantRequest(btcOnly), { account: owner(), chainId: 80002, now: Date.now() }).limits,
          names: { 1: 'BTC-PERP (#1)' },
          expiresAt: inAnHour() * 1000,
        }),
      );
      expect(trading()).toBe(0);
      bg.registry.decide(view!.id, { approve: true, digest: view!.digest });
      const r = await p;
      if (!r.ok) throw new Error(r.message);
      const [g] = (await call(bg, 'grant.list')).result as {
        id: string;
        venue: string;
        instruments: number[];
        maxNotional: string;
        expiresAt: number;
      }[];
      expect(r.r).toEqual({
        expiry: Math.floor(g!.expiresAt / 1000),
        grantedPermissions: [{ type: GRANT_PERMISSION_TYPE, data: { ...btcOnly }, policies: [] }],
        permissionsContext: g!.id,
      });
      expect(g).toMatchObject({ venue: 'perps', instruments: [1], maxNotional: '2000' });
      expect(g!.expiresAt).toBeLessThanOrEqual(inAnHour() * 1000);
      // Covered: a BTC order inside the caps is signed without a window (once the perps kill switch is armed).
      for (let i = 0; i < 400; i++) {
        const st = (await call(bg, 'deadman.status')).result as { venues: { venue: string; armed: boolean }[] };
        if (st.venues.some((x) => x.venue === 'perps' && x.armed)) break;
        await sleep(10);
      }
      const before = trading();
      await bg.page(page).request('perps_sendCommand', {
        op: {
          type: 'createOrders',
          args: [{ iid: 1, buy: true, qty: '0.001', p: await mark(BTC), tif: 'gtc', po: true }],
        },
      });
      expect(bg.registry.size).toBe(0);
      expect(trading() - before).toBe(1);
      // Revocable the same way: the site's own revoke ends it.
      await bg.page(page).request('wallet_revokePermissions', [{ eth_accounts: {} }]);
      expect((await call(bg, 'grant.list')).result).toEqual([]);
    },
  );

  it(
    'attack: permission type spoofs, unknown fields, policies, a foreign ' +
      'account or chain and a long expiry are refused with the field named',
    async () => {
      const bg = await ready();
      const cases: [unknown, string][] = [
        [
          [
            {
              expiry: inAnHour(),
              permissions: [{ type: 'native-token-recurring-allowance', data: btcOnly, policies: [] }],
            },
          ],
          'params.permissions[0].type',
        ],
        [
          [{ expiry: inAnHour(), permissions: [{ type: 'Countersign-Grant', data: btcOnly, policies: [] }] }],
          'params.permissions[0].type',
        ],
        [grantRequest({ ...btcOnly, withdraw: true }), 'params.permissions[0].data.withdraw'],
        [
          grantRequest({ ...btcOnly, allow: { ...btcOnly.allow, withdraw: true } }),
          'params.permissions[0].data.allow.withdraw',
        ],
        [
          [
            {
              expiry: inAnHour(),
              permissions: [
                {
                  type: GRANT_PERMISSION_TYPE,
                  data: btcOnly,
                  policies: [{ type: 'token-allowance', data: { allowance: '0x1' } }],
                },
              ],
            },
          ],
          'params.permissions[0].policies',
        ],
        [grantRequest(btcOnly, { address: '0x0000000000000000000000000000000000000001' }), 'params.address'],
        [grantRequest(btcOnly, { chainId: '0x1' }), 'params.chainId'],
        [grantRequest(btcOnly, { signer: { type: 'account', data: { id: owner() } } }), 'params.signer.type'],
        [
          [
            {
              expiry: Math.floor(Date.now() / 1000) + 25 * 3600,
              permissions: [{ type: GRANT_PERMISSION_TYPE, data: btcOnly }],
            },
          ],
          'params.expiry',
        ],
        [
          [{ expiry: Date.now() + 3_600_000, permissions: [{ type: GRANT_PERMISSION_TYPE, data: btcOnly }] }],
          'params.expiry',
        ],
        [
          [
            {
              expiry: inAnHour(),
              permissions: [
                { type: GRANT_PERMISSION_TYPE, data: btcOnly },
                { type: GRANT_PERMISSION_TYPE, data: btcOnly },
              ],
            },
          ],
          'params.permissions',
        ],
        [
          grantRequest(Object.fromEntries(Object.entries(btcOnly).filter(([k]) => k !== 'maxNotional'))),
          'params.permissions[0].data.maxNotional',
        ],
      ];
      for (const [params, field] of cases) {
        const r = await settle(bg.page(page).request('wallet_grantPermissions', params));
        expect(r, field).toMatchObject({ ok: false, code: -32602 });
        expect(r.ok ? '' : r.message, field).toContain(field);
      }
      expect(bg.registry.size).toBe(0);
      expect((await call(bg, 'grant.list')).result).toEqual([]);
    },
  );

  it(
    'attack: two requests at once, the person approves the narrow ' +
      'one: the grant is exactly the one shown, never the wider',
    async () => {
      const bg = await ready();
      const wide = { ...btcOnly, instruments: [1, 2], maxNotional: '1000000', dailyNotional: '1000000' };
      const narrow = settle(bg.page(page).request('wallet_grantPermissions', grantRequest(btcOnly)));
      const wider = settle(bg.page(page).request('wallet_grantPermissions', grantRequest(wide)));
      const views = await waitPending(bg, 2);
      const shown = views.find((x) => x.lines[0] === 'Perps venue only: BTC-PERP (#1).')!;
      const other = views.find((x) => x !== shown)!;
      expect(other.flags.join(' ')).toMatch(/more than/);
      // An approval carrying the narrow one's digest cannot approve the wide one.
      expect(() => bg.registry.decide(other.id, { approve: true, digest: shown.digest })).toThrow();
      bg.registry.decide(shown.id, { approve: true, digest: shown.digest });
      expect(await narrow).toMatchObject({ ok: true });
      expect(await wider).toMatchObject({ ok: false, code: 4001 });
      const list = (await call(bg, 'grant.list')).result as { instruments: number[]; maxNotional: string }[];
      expect(list.map((g) => [g.instruments, g.maxNotional])).toEqual([[[1], '2000']]);
    },
  );

  it('a locked vault or an unconnected site gets no window', async () => {
    const bg = await ready();
    const stranger = { ...page, url: 'https://stranger.example/', tab: { id: 8, url: 'https://stranger.example/' } };
    expect(await settle(bg.page(stranger).request('wallet_grantPermissions', grantRequest(btcOnly)))).toMatchObject({
      ok: false,
      code: 4100,
    });
    await call(bg, 'vault.lock');
    expect(await settle(bg.page(page).request('wallet_grantPermissions', grantRequest(btcOnly)))).toMatchObject({
      ok: false,
      code: 4900,
    });
    expect(bg.registry.size).toBe(0);
  });
});
