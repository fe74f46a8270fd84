/**
 * The permission methods (EIP-2255, ERC-7715 `wallet_grantPermissions`) and the grant use store, from a
 * page: a revoke or lock that answered acts before the next signature (the signature of a covered request
 * runs `GrantService.assertCovering` with the signing gate, `ExecuteOptions.still`: -32003, nothing
 * signed); a grant store refused as tampered covers nothing (every request asks, flagged) and the popup
 * keeps working, with no code a client retries (`TamperedRecordError` -32003, `KeyNotFoundError` 4100,
 * never -32603); caps hold under concurrency; a grant reaches no other site, frame, venue or account;
 * bad grant requests are typed errors naming the field; a window approves only what it showed. The real
 * background on the fake browser against the in-process sandbox; the accounting tests also run on a
 * Vault + GrantService over fake-indexeddb (as lib/grants/storage.test.ts).
 */
import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import type { Harness } from '../../test/kits/sandbox';
import { startBackground } from './index';
import {
  BOUNDS,
  browser,
  KDF,
  onboardDemo,
  type PagedBackground,
  pageSender,
  pagePathKit,
  recordingFetch,
  sandboxSuite,
  type SentRequest,
  sleep,
  until,
  waitPending,
  withPages,
  VIEM_RETRIES,
  btcOnly,
  perpsPosts,
  connectSite,
} from '../../test/kits/background';
import { GrantService } from '../grants/service';
import type { GrantRequest } from '../grants/evaluate';
import { openVaultDb } from '../vault/db';
import { userRejected } from '../errors/rpc';
import { grantUseRecords } from '../grants/use-records';
import { grantWorkers } from '../../test/kits/grants';

const SITE = 'https://trade.example';
const EVIL = 'https://evil.example';
const sender = pageSender;
const page = sender(SITE, 3);
const evilPage = sender(EVIL, 4);
let n = 0;
type Bg = PagedBackground;

let h: Harness;
const started = sandboxSuite((x) => (h = x));
const { call, owner, mark, armed, grantOf, btcOrder, codeOf } = pagePathKit({
  harness: () => h,
  started,
  site: SITE,
  page,
  dbPrefix: 'grant-permissions',
});

/**
 * What this background sent; while `gate` is set, a request `hold` picks waits for it after it is logged, before it
 * leaves.
 */
type Wire = { sent: SentRequest[]; hold?: (url: string, method: string) => boolean; gate?: Promise<void> };

async function ready(
  o: { connect?: boolean; dbName?: string; onboard?: boolean } = {},
): Promise<{ bg: Bg; wire: Wire; dbName: string }> {
  const wire: Wire = { sent: [] };
  const fetchFn = recordingFetch(wire, {
    beforeSend: async (url, method) => {
      if (wire.gate && wire.hold?.(url, method)) await wire.gate;
    },
  });
  const dbName = o.dbName ?? `grant-permissions-${n++}`;
  const bg = withPages(startBackground({ browser, dbName, kdf: KDF, bounds: BOUNDS, fetchFn }));
  started.push(bg);
  if (o.onboard !== false) await onboardDemo(bg, h, page, o);
  return { bg, wire, dbName };
}

/**
 * A background whose site holds a BTC-only grant (the dead-man armed), with a granted BTC order from the
 * site held at the first instruments read (the provider's symbol table, read after the grant check and
 * before the signature). `order` settles as `{ r }` or `{ e }`; `before` counts the perps order posts
 * before it; `release()` lets the held read go on.
 */
async function orderHeldBeforeSignature() {
  const { bg, wire } = await ready();
  const g = await grantOf(bg);
  await until(() => armed(bg));
  let open!: () => void;
  wire.gate = new Promise<void>((r) => (open = r));
  wire.hold = (url, method) => method === 'GET' && url.includes('/v1/info/instruments');
  const before = perpsPosts(wire);
  const order = bg
    .page(page)
    .request('perps_sendCommand', await btcOrder())
    .then(
      (r) => ({ r }),
      (e: unknown) => ({ e }),
    );
  await until(() => wire.sent.some((s) => s.url.includes('/v1/info/instruments')));
  const release = () => {
    open();
    wire.gate = undefined;
  };
  return { bg, wire, g, before, order, release };
}
const connect = connectSite;
const expiryIn = (s: number) => Math.floor(Date.now() / 1000) + s;
const grantParams = (data: object, o: Record<string, unknown> = {}) => [
  {
    expiry: expiryIn(3600),
    signer: { type: 'wallet' },
    permissions: [{ type: 'countersign-grant', policies: [], data }],
    ...o,
  },
];

// ------------------------------------------------------------------------------------------------
describe('revoke and lock act before the next signature', () => {
  it(
    'a popup revoke that resolved while a granted order was between its ' +
      'grant check and its signature stops that signature (-32003, nothing sent)',
    async () => {
      const { bg, wire, g, before, order, release } = await orderHeldBeforeSignature();
      // The person revokes in the popup; the procedure answers: the permission is gone.
      expect((await call(bg, 'grant.revoke', { id: g.id })).ok).toBe(true);
      expect((await call(bg, 'grant.list')).result).toEqual([]);
      release();
      const out = await order;
      expect(
        perpsPosts(wire) - before,
        `nothing is signed or sent after the revoke answered (page got ${JSON.stringify(out).slice(0, 200)})`,
      ).toBe(0);
      expect('e' in out && codeOf(out.e)).toBe(-32003);
    },
  );

  it('wallet_revokePermissions answered, then the granted order already past its check is not signed', async () => {
    const { bg, wire, before, order, release } = await orderHeldBeforeSignature();
    expect(await bg.page(page).request('wallet_revokePermissions', [{ eth_accounts: {} }])).toBeNull();
    release();
    await order;
    expect(perpsPosts(wire) - before, "nothing is signed or sent after the site's own revoke answered").toBe(0);
  });

  it('a lock in the same gap: nothing is signed (the key is gone)', async () => {
    const { bg, wire, before, order, release } = await orderHeldBeforeSignature();
    expect((await call(bg, 'vault.lock')).ok).toBe(true);
    release();
    const out = (await order) as { e?: unknown };
    expect(perpsPosts(wire) - before).toBe(0);
    expect(VIEM_RETRIES).not.toContain(codeOf(out.e));
  });
});

// ------------------------------------------------------------------------------------------------
describe('a torn grant store covers nothing at the page', () => {
  it(
    'a grant store refused as tampered covers nothing — the ' +
      'order asks (flagged), the popup still works, no retried code',
    async () => {
      const { bg, dbName } = await ready();
      const g = await grantOf(bg);
      await until(() => armed(bg));
      const first = await bg.page(page).request('perps_sendCommand', await btcOrder());
      expect(first).toBeTruthy();
      await grantUseRecords(bg.vault())['flushHeads'](); // the head catches up with its use (at most HEAD_LAG_MS later)
      // The head says n = 1; its bucket is lost (what lib/grants/README.md calls "a head without its use").
      const db = await openVaultDb(dbName);
      const keys = (await db.getAllKeys('secrets')).map(String).filter((k) => k.startsWith(`grantuse:${g.id}:`));
      expect(keys.length).toBe(1);
      for (const k of keys) await db.delete('secrets', k);
      // A worker restart over the same profile (the session store keeps the vault unlocked).
      const { bg: next } = await ready({ dbName, onboard: false });
      for (const p of ['vault.status', 'grant.list']) expect((await call(next, p)).ok, p).toBe(true);
      const order = next
        .page(page)
        .request('perps_sendCommand', await btcOrder())
        .then(
          () => 'ok',
          (e: unknown) => codeOf(e),
        );
      const [view] = await waitPending(next);
      expect(view!.flags.join(' ')).toMatch(/integrity check/);
      next.registry.rejectAll(() => userRejected('closed by the test'));
      const code = await order;
      expect(code).toBe(4001);
      expect(VIEM_RETRIES).not.toContain(code);
    },
  );
});

// ------------------------------------------------------------------------------------------------
describe('caps hold under concurrency at the page', () => {
  it('three granted orders racing the last slot of the 24 h cap: exactly one signed without a window', async () => {
    const { bg, wire } = await ready();
    const m = Number(await mark(1));
    const notional = 0.01 * m;
    await grantOf(bg, { ...btcOnly, dailyNotional: (Math.ceil(notional * 1.5 * 100) / 100).toFixed(2) });
    await until(() => armed(bg));
    const before = perpsPosts(wire);
    const tab = bg.page(page);
    const outs = [tab, bg.page(page), bg.page(page)].map(async (t) =>
      t.request('perps_sendCommand', await btcOrder()).then(
        () => 'signed',
        (e: unknown) => codeOf(e),
      ),
    );
    await waitPending(bg, 2);
    expect(bg.registry.size).toBe(2);
    for (const v of bg.registry.list()) expect(v.flags.join(' ')).toMatch(/24 h|per 24|daily/i);
    bg.registry.rejectAll(() => userRejected('closed by the test'));
    await Promise.all(outs);
    expect(perpsPosts(wire) - before).toBe(1);
  });
});

// ------------------------------------------------------------------------------------------------
describe("a site's permission never reaches another site, frame, venue or account", () => {
  it(
    "origin A's grant: B's identical order asks; a sub-frame " + "of A cannot even connect; A's order-book order asks",
    async () => {
      const { bg, wire } = await ready();
      await connect(bg, evilPage);
      await grantOf(bg);
      await until(() => armed(bg));
      const before = perpsPosts(wire);
      const evil = bg
        .page(evilPage)
        .request('perps_sendCommand', await btcOrder())
        .catch((e: unknown) => e);
      const [v] = await waitPending(bg);
      expect(v?.origin).toBe(EVIL);
      bg.registry.rejectAll(() => userRejected('closed by the test'));
      await evil;
      expect(perpsPosts(wire) - before).toBe(0);
      const frame = bg.page(sender(SITE, 3, 5));
      expect(frame.disconnected()).toBe(true);
      const token = h.ctx.clob.markets[0]!.tokenIds[0]!;
      const clob = bg
        .page(page)
        .request('clob_postOrders', {
          orders: [{ tokenId: token, side: 'BUY', price: '0.40', size: '10', orderType: 'GTC' }],
        })
        .catch((e: unknown) => e);
      const [w] = await waitPending(bg);
      expect(w?.kind).toBe('clob');
      bg.registry.rejectAll(() => userRejected('closed by the test'));
      await clob;
    },
  );
});

// ------------------------------------------------------------------------------------------------
describe('wallet_grantPermissions: bad input is a typed error naming the field, never a wider grant', () => {
  const cases = (): [string, unknown, RegExp][] => [
    ['expiry in ms', grantParams(btcOnly, { expiry: Date.now() + 3_600_000 }), /params\.expiry/],
    ['expiry as string', grantParams(btcOnly, { expiry: String(expiryIn(3600)) }), /params\.expiry/],
    ['expiry 24 h + 2 s', grantParams(btcOnly, { expiry: expiryIn(86_402) }), /params\.expiry/],
    ['expiry fractional', grantParams(btcOnly, { expiry: expiryIn(3600) + 0.5 }), /params\.expiry/],
    ['cap with exponent', grantParams({ ...btcOnly, maxNotional: '2e3' }), /maxNotional/],
    ['cap with leading zeros', grantParams({ ...btcOnly, dailyNotional: '020000' }), /dailyNotional/],
    ['negative cap', grantParams({ ...btcOnly, maxNotional: '-1' }), /maxNotional/],
    ['cap as number', grantParams({ ...btcOnly, maxNotional: 2000 }), /maxNotional/],
    ['cap with 7 decimals', grantParams({ ...btcOnly, maxNotional: '1.0000001' }), /maxNotional/],
    ['cap with unicode digits', grantParams({ ...btcOnly, maxNotional: '２０００' }), /maxNotional/],
    ['band over the max', grantParams({ ...btcOnly, priceBandPct: '1000' }), /priceBandPct/],
    ['instrument as string', grantParams({ ...btcOnly, instruments: ['1'] }), /instruments/],
    ['instrument negative', grantParams({ ...btcOnly, instruments: [-1] }), /instruments/],
    ['instrument fractional', grantParams({ ...btcOnly, instruments: [1.5] }), /instruments/],
    ['empty instruments', grantParams({ ...btcOnly, instruments: [] }), /instruments/],
    [
      '__proto__ in data',
      [
        {
          expiry: expiryIn(3600),
          permissions: [
            {
              type: 'countersign-grant',
              policies: [],
              data: JSON.parse(
                '{"venue":"perps","instruments":[1],"allow":{"order":true},"maxNotional":"1","dailyNotional":"1",' +
                  '"priceBandPct":"1","__proto__":{"instruments":[1,2,3]}}',
              ),
            },
          ],
        },
      ],
      /__proto__/,
    ],
    [
      'constructor in allow',
      grantParams({ ...btcOnly, allow: JSON.parse('{"order":true,"constructor":true}') }),
      /constructor/,
    ],
    ['withdraw in allow', grantParams({ ...btcOnly, allow: { order: true, withdraw: true } }), /allow\.withdraw/],
    [
      'unicode digits in a market',
      grantParams({
        venue: 'clob',
        markets: ['١٢٣'],
        allow: { order: true },
        maxNotional: '1',
        dailyNotional: '1',
        priceBandPct: '1',
      }),
      /markets/,
    ],
    [
      'market order on the order book',
      grantParams({
        venue: 'clob',
        markets: ['123'],
        allow: { order: true, market: true },
        maxNotional: '1',
        dailyNotional: '1',
        priceBandPct: '1',
      }),
      /allow\.market/,
    ],
    ['venue in upper case', grantParams({ ...btcOnly, venue: 'PERPS' }), /venue/],
    [
      'two permissions',
      [
        {
          expiry: expiryIn(3600),
          permissions: [
            { type: 'countersign-grant', data: btcOnly },
            { type: 'countersign-grant', data: { ...btcOnly, instruments: [2] } },
          ],
        },
      ],
      /permissions/,
    ],
    [
      'a policy',
      grantParams(btcOnly, { permissions: [{ type: 'countersign-grant', policies: [{ type: 'x' }], data: btcOnly }] }),
      /policies/,
    ],
    [
      'another signer',
      grantParams(btcOnly, { signer: { type: 'account', data: { id: '0x' + '1'.repeat(40) } } }),
      /signer/,
    ],
    ['another address', grantParams(btcOnly, { address: '0x' + '1'.repeat(40) }), /address/],
    ['another chain', grantParams(btcOnly, { chainId: '0x1' }), /chainId/],
    ['extra top-level field', grantParams(btcOnly, { isAdjustmentAllowed: true }), /isAdjustmentAllowed/],
  ];
  it('each malformed request is -32602 naming the field; no window, no grant', async () => {
    const { bg } = await ready();
    const tab = bg.page(page);
    const wrong: string[] = [];
    for (const [what, params, field] of cases()) {
      const e = (await Promise.race([
        tab.request('wallet_grantPermissions', params).then(
          () => ({ code: 0, message: 'granted' }),
          (x: unknown) => x,
        ),
        sleep(3000).then(() => ({
          code: 0,
          message: `a window opened: ${bg.registry
            .list()
            .map((x) => x.lines.join(' | '))
            .join(' // ')}`,
        })),
      ])) as { code?: number; message?: string };
      bg.registry.rejectAll(() => userRejected('closed by the test'));
      if (e.code !== -32602 || !field.test(e.message ?? '')) wrong.push(`${what}: ${e.code} ${e.message}`);
    }
    expect(wrong).toEqual([]);
    expect(await bg.grants().list()).toEqual([]);
  }, 60_000);

  it('the grant stored is exactly what the window showed and was bound to (limits, expiry, names)', async () => {
    const { bg } = await ready();
    const expiry = expiryIn(7200);
    const data = {
      venue: 'perps',
      instruments: [1, 1, 2],
      allow: { order: true, cancel: true },
      maxNotional: '1.5',
      dailyNotional: '3',
      priceBandPct: '0.5',
      ratePerMinute: 2,
      maxSize: '0.02',
      postOnly: true,
    };
    const asked = bg.page(page).request('wallet_grantPermissions', grantParams(data, { expiry })) as Promise<{
      expiry: number;
      permissionsContext: string;
      grantedPermissions: { data: object }[];
    }>;
    const [v] = await waitPending(bg);
    expect(v?.kind).toBe('grant');
    const shown = v!.lines.join('\n');
    bg.registry.decide(v!.id, { approve: true, digest: v!.digest });
    const answer = await asked;
    const [stored] = (await bg.grants().list()) as unknown as (
      { instruments: number[]; names?: Record<string, string>; expiresAt: number } | undefined
    )[];
    expect(stored).toBeDefined();
    expect(answer.expiry).toBe(expiry);
    expect(Math.abs(stored!.expiresAt - expiry * 1000)).toBeLessThan(1000);
    expect(stored!.expiresAt).toBeLessThanOrEqual(expiry * 1000);
    expect(stored).toMatchObject({
      origin: SITE,
      maxNotional: '1.5',
      dailyNotional: '3',
      priceBandPct: '0.5',
      ratePerMinute: 2,
      maxSize: '0.02',
      postOnly: true,
      allow: { order: true, cancel: true },
    });
    expect(answer.grantedPermissions[0]!.data).toMatchObject({
      maxNotional: '1.5',
      dailyNotional: '3',
      instruments: stored!.instruments,
    });
    for (const s of ['1.5 USDC', '3 USDC', '0.5%', '0.02', 'Post-only', '2 requests']) expect(shown).toContain(s);
    // Every instrument stored is named in the window.
    for (const i of new Set(stored!.instruments))
      expect(shown).toMatch(new RegExp(stored!.names?.[String(i)]?.replace(/[.*+?^${}()|[\]\\]/g, '\\$&') ?? `#${i}`));
  });
});

// ------------------------------------------------------------------------------------------------
describe('several grant requests pending: each window approves only its own', () => {
  it(
    "approving one pending grant with another's digest " + 'grants neither; each approval creates exactly its own',
    async () => {
      const { bg } = await ready();
      await connect(bg, evilPage);
      const narrow = bg
        .page(page)
        .request('wallet_grantPermissions', grantParams({ ...btcOnly, maxNotional: '1', dailyNotional: '1' }))
        .catch((e: unknown) => e);
      await waitPending(bg, 1);
      const wide = bg
        .page(evilPage)
        .request(
          'wallet_grantPermissions',
          grantParams({ ...btcOnly, instruments: [1, 2, 3], maxNotional: '100000', dailyNotional: '100000' }),
        )
        .catch((e: unknown) => e);
      await waitPending(bg, 2);
      const [a, b] = bg.registry.list();
      expect(a!.digest).not.toBe(b!.digest);
      expect(() => bg.registry.decide(a!.id, { approve: true, digest: b!.digest })).toThrow();
      expect(codeOf(await narrow)).toBe(4001);
      expect(await bg.grants().list()).toEqual([]);
      const again = bg
        .page(page)
        .request('wallet_grantPermissions', grantParams({ ...btcOnly, maxNotional: '1', dailyNotional: '1' }));
      await waitPending(bg, 2);
      const mine = bg.registry.list().find((x) => x.origin === SITE)!;
      bg.registry.decide(mine.id, { approve: true, digest: mine.digest });
      await again;
      const theirs = bg.registry.list().find((x) => x.origin === EVIL)!;
      bg.registry.decide(theirs.id, { approve: false });
      expect(codeOf(await wide)).toBe(4001);
      expect((await bg.grants().list()).map((g) => [g.origin, g.maxNotional])).toEqual([[SITE, '1']]);
    },
  );

  it(
    'two grants of one site pending for the same venue: once the first is approved, the ' +
      'second\'s window is rebuilt with the "replaces" flag and only that window can approve it',
    async () => {
      const { bg } = await ready();
      const one = bg
        .page(page)
        .request('wallet_grantPermissions', grantParams({ ...btcOnly, maxNotional: '1', dailyNotional: '1' }));
      const two = bg
        .page(page)
        .request(
          'wallet_grantPermissions',
          grantParams({ ...btcOnly, instruments: [2], maxNotional: '2', dailyNotional: '2' }),
        );
      await waitPending(bg, 2);
      const [a, b] = bg.registry.list();
      expect(b!.flags.join(' ')).not.toMatch(/replaces/); // nothing to replace yet
      bg.registry.decide(a!.id, { approve: true, digest: a!.digest });
      await one;
      const rebuilt = bg.registry.list().find((x) => x.id === b!.id)!;
      expect(rebuilt.flags.join(' ')).toMatch(/replaces the site's current perps permission/);
      expect(rebuilt.digest).not.toBe(b!.digest);
      // The window as it was (without the flag) cannot approve it any more.
      expect(() => bg.registry.decide(b!.id, { approve: true, digest: b!.digest })).toThrow();
      bg.registry.decide(b!.id, { approve: true, digest: rebuilt.digest });
      await two;
      expect((await bg.grants().list()).map((g) => (g as unknown as { instruments: number[] }).instruments)).toEqual([
        [2],
      ]);
    },
  );
});

// ------------------------------------------------------------------------------------------------
describe('floods of permission requests stay bounded', () => {
  it('200 wallet_grantPermissions at once: at most 5 windows, the rest -32002, no code viem retries', async () => {
    const { bg, wire } = await ready();
    const reads = wire.sent.length;
    const tab = bg.page(page);
    const outs = Array.from({ length: 200 }, () =>
      tab.request('wallet_grantPermissions', grantParams(btcOnly)).then(
        () => 'granted',
        (e: unknown) => codeOf(e),
      ),
    );
    await waitPending(bg, 5);
    await sleep(300);
    expect(bg.registry.size).toBeLessThanOrEqual(5);
    let settled = false;
    const all = Promise.all(outs).finally(() => (settled = true));
    for (let i = 0; i < 400 && !settled; i++) {
      bg.registry.rejectAll(() => userRejected('closed by the test'));
      await sleep(25);
    }
    const codes = new Set(await all);
    for (const c of codes) expect(VIEM_RETRIES).not.toContain(c);
    expect(codes.has('granted')).toBe(false);
    // What the flood costs in gateway reads (grant offers run before the pending limit is checked again).
    console.info(
      `grant request flood: ${wire.sent.length - reads} gateway requests ` +
        `for 200 wallet_grantPermissions; codes ${[...codes].join(',')}`,
    );
  }, 60_000);

  it(
    'a locked-vault storm of 100 eth_requestAccounts / ' +
      'wallet_requestPermissions opens one window and all resolve with the unlock',
    async () => {
      const { bg } = await ready({ connect: false });
      await call(bg, 'vault.lock');
      const tab = bg.page(page);
      const outs = Array.from({ length: 100 }, (_, i) =>
        tab
          .request(
            i % 2 ? 'eth_requestAccounts' : 'wallet_requestPermissions',
            i % 2 ? undefined : [{ eth_accounts: {} }],
          )
          .then(
            (r) => r,
            (e: unknown) => ({ code: codeOf(e) }),
          ),
      );
      await waitPending(bg, 1);
      await sleep(200);
      expect(bg.registry.size).toBe(1);
      expect((await call(bg, 'vault.unlock', { password: 'a good password' })).ok).toBe(true);
      const [v] = bg.registry.list();
      bg.registry.decide(v!.id, { approve: true, digest: v!.digest });
      const all = await Promise.all(outs);
      expect(all.filter((x) => (x as { code?: number }).code !== undefined)).toEqual([]);
      expect(await tab.request('eth_accounts')).toEqual([owner()]);
    },
  );
});

// ------------------------------------------------------------------------------------------------
describe('the use store keeps the caps across a clock moved backwards, a restart and a minute rollover', () => {
  const ACCOUNT = '0x5aA4Dd94dEa3FEb6B2Bd1a5E5DB3d9A5c3a40307';
  const ORDER: GrantRequest = {
    kind: 'order',
    venue: 'perps',
    orders: [{ market: '2', buy: true, size: '0.01', price: '3100', postOnly: true }],
  };
  const ref = async () => ({ price: '3100', source: 'mark' as const });
  const ok = async () => true;
  const T0 = 1_800_000_000_000;
  async function setup(limits: Record<string, unknown>) {
    const { clock, restart, first } = await grantWorkers(`grant-permissions-store-${n++}`, { now: T0, limits });
    return { clock, restart, ...first };
  }
  const use = (g: GrantService) => g.consume(SITE, ACCOUNT, ORDER, ref, ok).then((d) => !!d?.ok);

  it(
    'the clock moved back an hour (into earlier minute buckets) ' +
      'and forward again, with a restart in between: 24 h cap exact',
    async () => {
      const { clock, grants, restart } = await setup({ dailyNotional: '93' }); // 3 uses of 31
      expect(await use(grants)).toBe(true);
      clock.now -= 3_600_000; // back an hour
      expect(await use(grants)).toBe(true);
      clock.now += 3_600_000 + 120_000; // forward past the first
      expect(await use(grants)).toBe(true);
      expect(await use(grants)).toBe(false);
      clock.now -= 7_200_000; // back again, two hours
      const after = await restart();
      expect(await use(after.grants)).toBe(false);
      expect(await after.grants.list()).toMatchObject([{ used24h: '93', uses24h: 3 }]);
    },
  );

  it('a rate of 2 a minute across a restart and a clock moved back 30 s', async () => {
    const { clock, grants, restart } = await setup({ ratePerMinute: 2 });
    expect(await use(grants)).toBe(true);
    expect(await use(grants)).toBe(true);
    expect(await use(grants)).toBe(false);
    const after = await restart();
    expect(await use(after.grants)).toBe(false);
    clock.now -= 30_000;
    expect(await use(after.grants)).toBe(false);
    clock.now += 30_000 + 60_001;
    expect(await use(after.grants)).toBe(true);
  });

  it(
    'concurrent uses across a bucket boundary (minute ' + 'rollover mid-burst) count every one after a restart',
    async () => {
      const { clock, grants, restart } = await setup({ dailyNotional: '310' }); // 10 uses
      clock.now = Math.ceil(T0 / 60_000) * 60_000 - 5; // 5 ms before a minute boundary
      const burst = Array.from({ length: 15 }, (_, i) => {
        if (i === 7) clock.now += 10; // the minute rolls over mid-burst
        return use(grants);
      });
      const results = await Promise.all(burst);
      expect(results.filter(Boolean)).toHaveLength(10);
      const after = await restart();
      expect(await after.grants.list()).toMatchObject([{ used24h: '310', uses24h: 10 }]);
      expect(await use(after.grants)).toBe(false);
    },
  );
});
