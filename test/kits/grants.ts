/**
 * The grants suites' shared setup: the real background on a fake browser against the
 * in-process sandbox, with a connected site (`SITE`), the demo account's keys and API credentials, and
 * helpers that send page requests and read the sandbox's records. `grantSuite(prefix)` registers the
 * sandbox's hooks; `h` is the running sandbox (a live binding, set before the first test). Test-only:
 * nothing in the extension imports it.
 */
import { expect } from 'vitest';
import { fakeBrowser } from 'wxt/testing/fake-browser';
import type { Harness } from './sandbox';
import { startBackground } from '../../lib/background/index';
import { userRejected } from '../../lib/errors/rpc';
import { BOUNDS, browser, KDF, sandboxSuite, withPages, type PagedBackground } from './background';
import { openVaultDb } from '../../lib/vault/db';
import { memorySessionStore, Vault } from '../../lib/vault/vault';
import { durableAuditJournal, type AuditJournal } from '../../lib/audit/journal';
import { journalStore } from './journal';
import { GrantService } from '../../lib/grants/service';
import { DAY_MS, type GrantRequest } from '../../lib/grants/evaluate';
import { Authority } from '../../lib/authority/epoch';
import { grantUseRecords } from '../../lib/grants/use-records';
import type { Address } from 'viem';
import { clobArtifact, perpsArtifact, type ClobArtifact, type PerpsArtifact } from '../../lib/signer/artifact';
import type { PerpsCommand } from '../../lib/perps/commands';
import { orderRequestAmounts } from '../../lib/clob/amounts';
import { buildClobOrder, exchangeAddress, toPostOrderBody } from '../../lib/clob/order';
import type { ClobOrderRequest } from '../../lib/clob/request';

/** The running sandbox (set by `grantSuite`'s `beforeAll`). */
export let h: Harness;
let prefix = 'grants';
let n = 0;

/**
 * Registers the suite's hooks (`sandboxSuite`): one sandbox for the file on the wall clock, a fresh fake
 * browser per test with the sandbox's clock brought to now, the order book's heartbeat sessions forgotten
 * after each. `name` prefixes the databases.
 */
export function grantSuite(name: string): void {
  prefix = name;
  sandboxSuite((x) => {
    h = x;
  });
}

/** A new background on the database of the last `ready()` (a worker restart on the same profile). */
export function restart(): Bg {
  return withPages(startBackground({ browser, dbName: `${prefix}-${n}`, kdf: KDF, bounds: BOUNDS }));
}

export const SITE = 'https://trade.example';
export const page = {
  get id() {
    return fakeBrowser.runtime.id;
  },
  url: `${SITE}/app`,
  frameId: 0,
  tab: { id: 3, url: `${SITE}/app` },
};
export const popup = () => ({
  id: fakeBrowser.runtime.id,
  url: `${fakeBrowser.runtime.getURL('/').replace(/\/$/, '')}/popup.html`,
});
export const approvalWindow = () => ({
  id: fakeBrowser.runtime.id,
  url: `${fakeBrowser.runtime.getURL('/').replace(/\/$/, '')}/approval.html`,
});
/** A background with its page ports (`bg.page(page).request(method, params)`). */
export type Bg = PagedBackground;
export type Reply = { ok: boolean; result?: unknown; error?: { name: string; shortMessage: string; code?: number } };
export const call = async (bg: Bg, type: string, payload: unknown = {}, sender: object = popup()) =>
  (await bg.handle({ type, payload }, sender)) as Reply;

export const owner = () => h.demo.owner.address;
/**
 * Requests that trade or cancel that reached the sandbox. The dead-man's own auto-cancel renewals are
 * not counted (the extension sends them while a grant is live); `autoCancelAt(t)` counts those with time `t`.
 */
export const trading = () =>
  h.ctx.requestLog.filter(
    (r) =>
      r.method !== 'GET' &&
      /^\/perps\/v1\/trade\/(orders|orders-coid|orders\/all|leverage|margin)$|^\/clob\/orders?$/.test(r.path),
  ).length;
export const autoCancelAt = (t: number) => () =>
  h.ctx.requestLog.filter(
    (r) =>
      r.path === '/perps/v1/trade/auto-cancel' &&
      (JSON.parse(r.body ?? '{}') as { op?: { args?: { time?: number } } }).op?.args?.time === t,
  ).length;
export const openPerps = () =>
  [...h.ctx.venue.orders.values()].filter(
    (o) => o.owner === owner().toLowerCase() && (o.status === 'open' || o.status === 'untriggered'),
  );
export const BTC = '1';
export const ETH = '2';

export async function ready(): Promise<Bg> {
  const bg = withPages(startBackground({ browser, dbName: `${prefix}-${++n}`, kdf: KDF, bounds: BOUNDS }));
  await call(bg, 'vault.create', { password: 'a good password' });
  await call(bg, 'settings.set', {
    perpsUrl: h.perps,
    clobUrl: h.clobUrl,
    gammaUrl: `${h.url}/gamma`,
    dataUrl: `${h.url}/data`,
  });
  await call(bg, 'vault.importOwnerKey', { privateKey: h.demo.owner.privateKey });
  await call(bg, 'proxy.import', {
    account: owner(),
    privateKey: h.demo.proxy.privateKey,
    proxy: h.demo.proxy.address,
    secret: h.demo.proxy.secret,
    expiry: h.demo.proxy.expiry,
  });
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
/** A narrow perps grant: BTC-PERP only, 2 000 USDC per order, 20 000 per 24 h, 2 % band. */
export const btcOnly = {
  venue: 'perps',
  instruments: [1],
  allow: { order: true, cancel: true, leverage: false },
  maxNotional: '2000',
  dailyNotional: '20000',
  priceBandPct: '2',
  slippagePct: '1',
};
export const grant = (bg: Bg, limits: object) =>
  bg.grants().create({ origin: SITE, account: owner(), limits: limits as never, durationMs: 3_600_000 });
export const tokenA = () => h.ctx.clob.markets[0]!.tokenIds[0]!;
export const tokenB = () => h.ctx.clob.markets[3]!.tokenIds[0]!;
export const mark = async (iid: string) =>
  ((await h.read('tickers', { instrument_id: Number(iid) })) as { mark_price: string }[])[0]!.mark_price;

/**
 * Sends `method(params)` from the page and expects it to wait for a window: one pending approval whose
 * flags match `flag`, with nothing sent to the sandbox; then rejects it and expects 4001 and still nothing.
 */
export async function expectAsks(
  bg: Bg,
  method: string,
  params: unknown,
  flag?: RegExp,
  reached: () => number = trading,
) {
  const before = reached();
  const outcome = bg
    .page(page)
    .request(method, params)
    .then(
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

// ------------------------------------------------------------------------------------------------
// Grant uses carried by the audit journal (the page path; lib/grants/leftovers.test.ts and the grant
// suites that restart the worker): a Vault, a GrantService and the journal over fake-indexeddb and an in-memory journal
// store, with a clock seam; `restart()` opens all three again on the same stores (a worker restart). No background.

/** The account these suites' grant belongs to (any address: nothing is signed). */
export const USE_ACCOUNT = '0x5aA4Dd94dEa3FEb6B2Bd1a5E5DB3d9A5c3a40307';
/** A minute boundary (Unix ms): the suites' clock starts here. */
export const USE_T0 = 1_800_000_000_000 - (1_800_000_000_000 % 60_000);
/** 0.01 ETH-PERP at 3 100: 31 USDC notional. */
export const USE_ORDER: GrantRequest = {
  kind: 'order',
  venue: 'perps',
  orders: [{ market: '2', buy: true, size: '0.01', price: '3100', postOnly: true }],
};
/** The reference price and the kill switch `GrantService.decide` gets: 3 100, armed. */
export const useRef = async () => ({ price: '3100', source: 'mark' as const });
export const useArmed = async () => true;
/** A granted submission's journal record, as the signer opens it (the use is added per order). */
export const USE_RECORD = {
  at: USE_T0,
  origin: SITE,
  account: USE_ACCOUNT.toLowerCase(),
  kind: 'perps.createOrders',
  summary: 'Buy 0.01 ETH-PERP (standing permission)',
  digest: '0x01',
};

/** One worker of these suites. */
export type UseWorker = { vault: Vault; grants: GrantService; journal: AuditJournal };
let useDbs = 0;

/**
 * The grant suites' worker set-up without a background: a Vault and a GrantService over fake-indexeddb
 * (database `db`, must be new) and an in-memory journal store (`store`, read by an audit journal), on
 * `clock` (Unix ms, starting at `now`). The first worker creates the vault and one grant of `SITE` for
 * `USE_ACCOUNT`, 24 h long: ETH-PERP orders, 1 000 USDC per order and per 24 h, 2 % band, 1 % slippage,
 * with `limits` laid over those. `journal: true` wires the grant service to the journal's leftovers as
 * `compose.ts` does (otherwise the journal exists but the service does not read it). `restart(restore = true)`
 * opens the next worker on the same stores (a worker restart), expecting the vault's session to restore unless told not
 * to.
 */
export async function grantWorkers(
  db: string,
  o: { now: number; limits?: Record<string, unknown>; journal?: boolean },
) {
  const vaultDb = await openVaultDb(db);
  const clock = { now: o.now };
  const session = memorySessionStore();
  const store = journalStore();
  const open = (): UseWorker => {
    const vault = new Vault({ db: vaultDb, session, now: () => clock.now, kdf: KDF, bounds: BOUNDS });
    const journal = durableAuditJournal(store, () => clock.now);
    return {
      vault,
      journal,
      grants: new GrantService({
        authority: new Authority(),
        vault,
        now: () => clock.now,
        ...(o.journal ? { journal } : {}),
      }),
    };
  };
  const first = open();
  await first.vault.create('a long enough password');
  const grant = await first.grants.create({
    origin: SITE,
    account: USE_ACCOUNT,
    durationMs: DAY_MS,
    limits: {
      venue: 'perps',
      instruments: [2],
      allow: { order: true },
      maxNotional: '1000',
      dailyNotional: '1000',
      priceBandPct: '2',
      slippagePct: '1',
      ...o.limits,
    } as never,
  });
  const restart = async (restore = true): Promise<UseWorker> => {
    const next = open();
    if (restore) expect(await next.vault.restoreSession()).toBe(true);
    return next;
  };
  return { db: vaultDb, clock, grant, store, first, restart };
}

/**
 * `grantWorkers` for the journal suites: a fresh database named after `prefix`, the clock at `USE_T0`, the
 * grant's 24 h cap `daily` USDC, the grant service wired to the journal.
 */
export async function useWorkers(prefix: string, daily = '100') {
  const { clock, grant, store, first, restart } = await grantWorkers(`${prefix}-${useDbs++}`, {
    now: USE_T0,
    limits: { dailyNotional: daily },
    journal: true,
  });
  return { clock, grant, store, first, restart };
}

/** The vault's bucket sealer, replaced to hold or fail a use's write. */
export type Sealer = { sealBucket: (...a: unknown[]) => Promise<unknown> };

/**
 * One covered order as the signer runs it: decided, its journal record (carrying the use) stored, "sent";
 * then, with `close`, its audit entry written (`journal.close`). `write`: 'lands', 'never' (the worker
 * stops before its write: it never runs) or 'fails' (a storage error). `ok` false: not covered.
 */
export async function useOrder(
  w: UseWorker,
  write: 'lands' | 'never' | 'fails' = 'lands',
  o: { close?: boolean } = {},
): Promise<{ ok: boolean; id?: string }> {
  const v = grantUseRecords(w.vault) as unknown as Sealer;
  const real = v.sealBucket.bind(v);
  if (write === 'never') v.sealBucket = () => new Promise(() => undefined);
  if (write === 'fails')
    v.sealBucket = async () => {
      throw new DOMException('The transaction was aborted', 'AbortError');
    };
  const d = await w.grants.decide(SITE, USE_ACCOUNT, USE_ORDER, useRef, useArmed);
  if (!d?.ok) {
    v.sealBucket = real;
    return { ok: false };
  }
  const { reservation } = d;
  await reservation.counted;
  const rec = reservation.carry(w.journal, USE_RECORD); // as the signer does (`openJournal`)
  await reservation.durable; // sent from here on
  if (write === 'lands') await reservation.written;
  if (write === 'fails') await reservation.written.catch(() => undefined);
  // A stopped worker's write never runs (it would, from a later task, with the real sealer back).
  if (write !== 'never') v.sealBucket = real;
  if (o.close !== false) await w.journal.close(rec.id); // its audit entry written
  return { ok: true, id: rec.id };
}

/** The grant's uses of the last 24 h as `grant.list` reports them. */
export const uses24h = async (g: GrantService) => (await g.list())[0]?.uses24h;
/** The journal records the store holds. */
export const journalRecords = (s: { store: { data: Record<string, unknown> } }) =>
  Object.values(s.store.data as Record<string, { use?: unknown }>);

/**
 * A stub signer's `preparePerps`: the artifact of `cmd` for `account` (a placeholder domain, salt 1,
 * never signed), for page-path tests that stand in for the signing service.
 */
export const stubPerpsArtifact = (account: string, cmd: PerpsCommand, o: { submit: boolean }): PerpsArtifact =>
  perpsArtifact({
    account: account as Address,
    key: cmd.signer,
    signerAddress: account as Address,
    domain: { name: 'P', version: '1', chainId: 1 },
    endpoint: cmd.endpoint,
    envelope: { op: cmd.body, salt: 1, ts: Date.now() },
    submit: o.submit,
    builtAt: Date.now(),
  });

/**
 * A stub signer's `prepareClob`: the unsigned order-book artifact of `orders` for `account` (tick 0.01,
 * not negative-risk, chain 80002), as the real service builds it before its signature.
 */
export const stubClobArtifact = (account: string, orders: readonly ClobOrderRequest[]): ClobArtifact =>
  clobArtifact({
    account: account as Address,
    signerAddress: account as Address,
    chainId: 80002,
    builtAt: Date.now(),
    orders: orders.map((req) => {
      const a = orderRequestAmounts({ ...req, tickSize: '0.01' });
      const order = buildClobOrder({
        signer: account as Address,
        signatureType: 0,
        tokenId: req.tokenId,
        side: req.side,
        makerAmount: a.makerAmount,
        takerAmount: a.takerAmount,
        timestampMs: Date.now(),
      });
      const full = toPostOrderBody({
        order,
        signature: '0x',
        owner: 'api-key',
        orderType: req.orderType,
        postOnly: req.postOnly ?? false,
        nowMs: Date.now(),
      });
      const { signature: _s, ...unsigned } = full.order;
      return {
        verifyingContract: exchangeAddress({ negRisk: false }),
        negRisk: false,
        tickSize: '0.01',
        body: { ...full, order: unsigned },
      };
    }),
  });
