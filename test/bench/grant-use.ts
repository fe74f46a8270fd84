/**
 * The per-order cost of a standing grant as its uses grow ("flat as a grant is used"): a
 * grant holding 10 / 10 000 / 50 000 / 86 400 uses of the last 24 h (one a second for a day), then
 * `GrantService.consume` of one covered order — the grant check and its use written to the sealed vault
 * (`GrantUseRecords.addGrantUse`, `lib/grants/use-records.ts`) — p50 / p95 over 200, after the service read the grant
 * afresh. Node with fake-indexeddb (an IndexedDB in JavaScript). A use writes its own bucket, never the other uses; for
 * scale, re-sealing and rewriting all the uses on each order costs 0.6 ms at 10, 8 ms at 10 000, 34 ms at 50 000, 53 ms
 * at 86 400. Prints figures; never fails.
 */
import 'fake-indexeddb/auto';
import { GrantService } from '../../lib/grants/service';
import { DAY_MS, type GrantRequest, type GrantUse } from '../../lib/grants/evaluate';
import { openVaultDb } from '../../lib/vault/db';
import { memorySessionStore, Vault } from '../../lib/vault/vault';
import { Authority } from '../../lib/authority/epoch';
import { grantUseRecords } from '../../lib/grants/use-records';

/** The one authority epoch of this bench's services. */
const epoch = new Authority();

const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))] ?? NaN;
const KDF = { name: 'scrypt' as const, N: 2 ** 10, r: 8, p: 1, dkLen: 32 as const };
const ACCOUNT = '0x5aA4Dd94dEa3FEb6B2Bd1a5E5DB3d9A5c3a40307';
const ORDER: GrantRequest = {
  kind: 'order',
  venue: 'perps',
  orders: [{ market: '2', buy: true, size: '0.01', price: '3100', postOnly: true }],
};

/** One row: consume p50 / p95 (ms) with `n` uses already in the grant's 24 h. */
async function row(n: number): Promise<{ p50: number; p95: number; load: number }> {
  const db = await openVaultDb(`bench-grant-use-${n}`);
  const vault = new Vault({
    db,
    session: memorySessionStore(),
    kdf: KDF,
    bounds: { minN: 2 ** 10, maxN: 2 ** 20, maxR: 16, maxP: 4 },
  });
  await vault.create('benchmark password');
  const grants = new GrantService({ authority: epoch, vault });
  const grant = await grants.create({
    origin: 'https://bench.example',
    account: ACCOUNT,
    durationMs: DAY_MS,
    limits: {
      venue: 'perps',
      instruments: [2],
      allow: { order: true },
      maxNotional: '1000',
      dailyNotional: '100000000',
      priceBandPct: '2',
      slippagePct: '1',
    },
  });
  const now = Date.now();
  const step = (DAY_MS - 5 * 60_000) / n;
  const uses: GrantUse[] = Array.from({ length: n }, (_, i) => ({
    at: Math.floor(now - DAY_MS + 60_000 + i * step),
    notional: '31',
    seq: i + 1,
  }));
  await grantUseRecords(vault).putGrant(grant, uses);
  grants.reload();
  const ref = async () => ({ price: '3100', source: 'mark' as const });
  const t0 = performance.now();
  await grants.list(); // the first read after a restart loads every bucket
  const load = performance.now() - t0;
  const times: number[] = [];
  for (let i = 0; i < 210; i++) {
    const t = performance.now();
    const d = await grants.consume('https://bench.example', ACCOUNT, ORDER, ref, async () => true);
    if (!d?.ok) throw new Error(`not covered: ${JSON.stringify(d)}`);
    if (i >= 10) times.push(performance.now() - t);
  }
  db.close();
  return { p50: pct(times, 50), p95: pct(times, 95), load };
}

/** Prints the grant-use micro-bench (see the module docstring). */
export async function benchGrantUse(): Promise<void> {
  console.log(
    '\nGrant use record (Node, fake-indexeddb): consume of one covered order — grant check + one sealed use written',
  );
  for (const n of [10, 10_000, 50_000, 86_400]) {
    const r = await row(n);
    console.log(
      `  ${String(n).padStart(6)} uses in 24 h: p50 ${r.p50.toFixed(2)} ms, p95 ` +
        `${r.p95.toFixed(2)} ms over 200 (first read after a restart ${r.load.toFixed(0)} ms)`,
    );
  }
}
