/**
 * ATTACKS 31 (grant/vault level; outside review of 1b1e391 + 4107427). Setup as attack30 (Vault +
 * GrantService + journal over fake-indexeddb with a clock seam; `restart()` = a worker restart).
 *
 * Tried:
 * - two worker stops in a row: the second worker's merge write of the first one's leftover fails too
 *   (storage error) and it stops; the third worker still counts the use (cap 3 orders: 2 more, not 3) — holds
 *   Note for test authors: attack30's `order(w, 'never')` helper restored the sealer before the
 *   background-task write ran, so that write actually landed (fixed since: a 'never' worker keeps it).
 * - a leftover merged while the next worker is in a trading session ('session' state): covered at the
 *   background level (lib/background/attack31.test.ts 31.1)
 */
import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import { GrantService, type LeftoverUse } from './service';
import { DAY_MS, type GrantRequest } from './evaluate';
import { openVaultDb } from '../vault/db';
import { memorySessionStore, Vault } from '../vault/vault';
import { sessionAuditJournal, type AuditJournal } from '../audit/journal';
import { TamperedRecordError } from '../vault/errors';

const KDF = { name: 'scrypt' as const, N: 2 ** 10, r: 8, p: 1, dkLen: 32 as const };
const BOUNDS = { minN: 2 ** 10, maxN: 2 ** 20, maxR: 16, maxP: 4 };
const SITE = 'https://trade.example';
const ACCOUNT = '0x5aA4Dd94dEa3FEb6B2Bd1a5E5DB3d9A5c3a40307';
const T0 = 1_800_000_000_000 - (1_800_000_000_000 % 60_000);
/** 0.01 ETH-PERP at 3 100: 31 USDC notional. */
const ORDER: GrantRequest = { kind: 'order', venue: 'perps', orders: [{ market: '2', buy: true, size: '0.01', price: '3100', postOnly: true }] };
const ref = async () => ({ price: '3100', source: 'mark' as const });
const armed = async () => true;
const RECORD = { at: T0, origin: SITE, account: ACCOUNT.toLowerCase(), kind: 'perps.createOrders', summary: 'Buy 0.01 ETH-PERP (standing permission)', digest: '0x01' };
let n = 0;
const tick = (ms = 10) => new Promise((r) => setTimeout(r, ms));

function area() {
  const data: Record<string, unknown> = {};
  return {
    data,
    get: async (k: string) => ({ [k]: structuredClone(data[k]) }),
    set: async (items: Record<string, unknown>) => void Object.assign(data, structuredClone(items)),
  };
}

type Worker = { vault: Vault; grants: GrantService; journal: AuditJournal };

async function setup(daily = '100') {
  const db = await openVaultDb(`grant-attack31-${n++}`);
  const clock = { now: T0 };
  const session = memorySessionStore();
  const store = area();
  const open = (): Worker => {
    const vault = new Vault({ db, session, now: () => clock.now, kdf: KDF, bounds: BOUNDS });
    const journal = sessionAuditJournal(store, () => clock.now);
    const leftoverUses = async (): Promise<LeftoverUse[]> => (await journal.leftovers()).flatMap(({ id, record }) => (record.use ? [{ use: record.use, settle: () => void journal.useStored(id) }] : []));
    return { vault, journal, grants: new GrantService({ vault, now: () => clock.now, leftoverUses }) };
  };
  const first = open();
  await first.vault.create('a long enough password');
  const grant = await first.grants.create({
    origin: SITE,
    account: ACCOUNT,
    durationMs: DAY_MS,
    limits: { venue: 'perps', instruments: [2], allow: { order: true }, maxNotional: '1000', dailyNotional: daily, priceBandPct: '2', slippagePct: '1' },
  });
  const restart = async (restore = true): Promise<Worker> => {
    const next = open();
    if (restore) expect(await next.vault.restoreSession()).toBe(true);
    return next;
  };
  return { clock, grant, store, first, restart };
}

type Sealer = { sealBucket: (...a: unknown[]) => Promise<unknown> };

/**
 * One covered order as the signer runs it (decided, journal record with the use stored, "sent", entry
 * written → `close`). `write`: 'lands', 'never' (worker stops first) or 'fails' (a storage error).
 */
async function order(w: Worker, write: 'lands' | 'never' | 'fails' = 'lands'): Promise<{ ok: boolean; id?: string }> {
  const v = w.vault as unknown as Sealer;
  const real = v.sealBucket.bind(v);
  if (write === 'never') v.sealBucket = () => new Promise(() => undefined);
  if (write === 'fails')
    v.sealBucket = async () => {
      throw new DOMException('The transaction was aborted', 'AbortError');
    };
  const d = await w.grants.decide(SITE, ACCOUNT, ORDER, ref, armed);
  if (!d?.ok || !d.use || !d.counted || !d.stored) {
    v.sealBucket = real;
    return { ok: false };
  }
  await d.counted;
  const rec = w.journal.open({ ...RECORD, use: d.use });
  d.onStored?.(() => void w.journal.useStored(rec.id)); // as the signer does (`openJournal`)
  await rec.stored; // sent from here on
  if (write === 'lands') await d.stored;
  if (write === 'fails') await d.stored.catch(() => undefined);
  v.sealBucket = real;
  await w.journal.close(rec.id); // its audit entry written
  return { ok: true, id: rec.id };
}

const uses24h = async (g: GrantService) => (await g.list())[0]?.uses24h;
const stored = (s: { store: { data: Record<string, unknown> } }) => Object.values((s.store.data.auditJournal ?? {}) as Record<string, { use?: unknown }>);

describe('31G.1 two stops in a row, the merge write fails in between', () => {
  it('holds: worker 1 sends with its write failing and stops; worker 2 merges the leftover but that write fails, and stops; worker 3 counts the use (3 orders fit the cap: 2 more, not 3)', async () => {
    const s = await setup('100'); // 31 USDC an order: 3 fit
    // A write that fails leaves the use in the journal record only, which is what is wanted here.
    expect((await order(s.first, 'fails')).ok).toBe(true);
    expect(stored(s).filter((r) => r.use)).toHaveLength(1);
    const w2 = await s.restart();
    expect((await w2.vault.listGrants())[0]!.uses, 'not in the vault').toHaveLength(0);
    const v2 = w2.vault as unknown as Sealer;
    const real = v2.sealBucket.bind(v2);
    let tried = 0;
    v2.sealBucket = async () => {
      tried++;
      throw new DOMException('The transaction was aborted', 'AbortError');
    };
    expect(await uses24h(w2.grants)).toBe(1); // merged here
    for (let i = 0; i < 200 && !tried; i++) await tick(10); // its write is tried, and fails
    await tick(20);
    v2.sealBucket = real;
    expect(tried).toBeGreaterThan(0);
    expect(stored(s).filter((r) => r.use), 'the record still carries the use').toHaveLength(1);
    const w3 = await s.restart();
    expect(await uses24h(w3.grants)).toBe(1);
    expect((await order(w3)).ok).toBe(true);
    expect((await order(w3)).ok).toBe(true);
    expect((await order(w3)).ok, 'a fourth order on a 3-order cap').toBe(false);
  }, 30_000);
});
