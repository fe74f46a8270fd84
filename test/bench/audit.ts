/**
 * Audit log benchmark: at 1 000 000 entries (`AUDIT_BENCH_N`
 * to change it) — append p50 (target ≤ 1 ms), opening the Audit tab (check + first page + origins;
 * target ≤ 200 ms), a full check's time and peak memory, and a cursor prune. Prints figures; never
 * fails on timing. Runs on fake-indexeddb in Node (an in-memory IndexedDB written in JavaScript, so the
 * log itself lives in the JS heap: memory figures are reported as the growth over the heap holding it).
 *
 * The log is built directly in large transactions with valid MACs and a valid checkpoint (what a
 * million appends would leave), so building it does not take a million append round trips; the build
 * computes the same HMAC-SHA256 synchronously (`@noble/hashes`) from the raw key bytes the bench
 * imported into WebCrypto, and everything measured afterwards uses WebCrypto as the extension does.
 */
import 'fake-indexeddb/auto';
import { hmac } from '@noble/hashes/hmac.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex } from '@noble/hashes/utils.js';
import {
  appendAudit,
  auditLog,
  auditOrigins,
  checkAudit,
  pageAudit,
  pruneAudit,
  type AuditInput,
  type AuditLog,
} from '../../lib/audit';
import { ZERO } from '../../lib/audit/log';
import { checkpointParts, entryParts } from '../../lib/audit/mac';
import {
  auditGroupOf,
  openVaultDb,
  type AuditCheckpointRecord,
  type AuditEntry,
  type VaultDb,
} from '../../lib/vault/db';

const N = Number(process.env.AUDIT_BENCH_N ?? 1_000_000);
const BUILD_TX = 2_000; // fake-indexeddb's request queue slows down in very large transactions
const ORIGINS = ['dead-man', 'https://app.example', 'https://bot.example', 'extension'];
const KINDS = ['deadman.period', 'perps.createOrders', 'perps.cancelOrders', 'clob.postOrders', 'grant.create'];
const DAY = 86_400_000;

const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))]!;
const mb = (b: number) => `${(b / 1e6).toFixed(0)} MB`;
const ms = (t: number) => (t >= 1000 ? `${(t / 1000).toFixed(1)} s` : `${t.toFixed(t < 10 ? 2 : 0)} ms`);

function input(i: number, at: number): AuditInput {
  const kind = KINDS[i % KINDS.length]!;
  return {
    at,
    origin: ORIGINS[i % ORIGINS.length]!,
    account: '0x5b38da6a701c568545dcfcb03fcb875f56beddc4',
    kind,
    summary:
      kind === 'deadman.period'
        ? `Kill switches armed for 1 h: 450 renewals, last at ${new Date(at).toISOString()}`
        : `Buy 0.01 BTC-PERP at 64,${String(i % 1000).padStart(3, '0')}.00, good-til-cancelled — request weight 1`,
    digest: `0x${(i * 2654435761).toString(16).padStart(64, '0').slice(-64)}`,
    result: 'ok',
  };
}

const te = new TextEncoder();
const mac = (raw: Uint8Array, parts: unknown[]) => bytesToHex(hmac(sha256, raw, te.encode(JSON.stringify(parts))));

/** Writes `n` chained entries (ids 1…n, `at` spread over the last 400 days) and their checkpoint, MAC'd with `raw`. */
async function build(db: VaultDb, raw: Uint8Array, n: number, now: number): Promise<void> {
  let head = ZERO;
  for (let from = 1; from <= n; from += BUILD_TX) {
    const batch: AuditEntry[] = [];
    for (let id = from; id < Math.min(from + BUILD_TX, n + 1); id++) {
      const e: AuditEntry = {
        ...input(id, now - 400 * DAY + Math.floor((id / n) * 399 * DAY)),
        group: '',
      } as AuditEntry;
      e.group = auditGroupOf(e.kind);
      e.id = id;
      e.prev = head;
      e.mac = mac(raw, entryParts(e, id, head));
      head = e.mac;
      batch.push(e);
    }
    const tx = db.transaction('audit', 'readwrite');
    for (const e of batch) void tx.store.put(e);
    await tx.done;
  }
  const c: Omit<AuditCheckpointRecord, 'mac'> = {
    id: 'auditCheckpoint',
    v: 1,
    count: n,
    firstId: 1,
    chainFrom: 1,
    anchor: ZERO,
    lastId: n,
    head,
    startedAt: now - 400 * DAY,
    seals: [],
  };
  await db.put('meta', { ...c, mac: mac(raw, checkpointParts(c)) });
}

async function settle(log: AuditLog, full: boolean): Promise<{ ok: boolean; count: number }> {
  let r = await checkAudit(log, { full });
  while (r.state === 'checking') {
    await new Promise((res) => setTimeout(res, 50));
    r = await checkAudit(log);
  }
  return r;
}

export async function benchAudit(): Promise<void> {
  const db = await openVaultDb('bench-audit');
  const raw = crypto.getRandomValues(new Uint8Array(32));
  const key = await crypto.subtle.importKey('raw', raw, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign', 'verify']);
  const now = Date.now();
  const log = auditLog(db, async () => key, { now: () => now });
  console.log(
    `\nAudit log at ${N.toLocaleString('en')} entries (fake-indexeddb ${'6.x'} in ` +
      `Node ${process.version}: an in-memory IndexedDB in JavaScript, not a browser's)`,
  );

  let t0 = performance.now();
  await build(db, raw, N, now);
  const heapWithLog = process.memoryUsage().heapUsed;
  console.log(
    `  build (direct, ${BUILD_TX.toLocaleString('en')} entries per transaction, valid ` +
      `MACs): ${ms(performance.now() - t0)}; JS heap holding the log: ${mb(heapWithLog)}`,
  );

  // A full check, sampled for memory while it runs.
  globalThis.gc?.();
  const base = process.memoryUsage();
  let peakHeap = base.heapUsed;
  let peakRss = base.rss;
  const sampler = setInterval(() => {
    const m = process.memoryUsage();
    peakHeap = Math.max(peakHeap, m.heapUsed);
    peakRss = Math.max(peakRss, m.rss);
  }, 20);
  t0 = performance.now();
  const full = await settle(log, true);
  const fullMs = performance.now() - t0;
  clearInterval(sampler);
  console.log(
    `  full check (background, chunks of 1 000): ${ms(fullMs)} (${((fullMs * 1000) / N).toFixed(1)} ` +
      `µs/entry), ok=${full.ok}; peak memory growth during it: heap +${mb(peakHeap - base.heapUsed)}, ` +
      `RSS +${mb(peakRss - base.rss)} (uncollected garbage included; the walk holds one chunk)`,
  );

  // Appends (the first one warms the checkpoint cache).
  await appendAudit(log, input(0, now));
  const times: number[] = [];
  for (let i = 1; i <= 2_000; i++) {
    const t = performance.now();
    await appendAudit(log, input(i, now));
    times.push(performance.now() - t);
  }
  console.log(
    `  append (one transaction, two HMACs): p50 ${ms(pct(times, 0.5))}, ` +
      `p99 ${ms(pct(times, 0.99))} over 2 000 (target p50 ≤ 1 ms)`,
  );

  // Opening the Audit tab: the check (constant-cost comparison + the 2 001 entries added since), the first page, the
  // origins.
  t0 = performance.now();
  const check = await checkAudit(log);
  const tCheck = performance.now() - t0;
  t0 = performance.now();
  const first = await pageAudit(log, { limit: 50 });
  const tPage = performance.now() - t0;
  t0 = performance.now();
  const origins = await auditOrigins(log);
  const tOrigins = performance.now() - t0;
  console.log(
    `  Audit tab open: check ${ms(tCheck)} (state ${check.state}, ${check.checked} new entries ` +
      `verified) + first page of 50 ${ms(tPage)} + ${origins.length} origins ${ms(tOrigins)} = ` +
      `${ms(tCheck + tPage + tOrigins)} (target first page ≤ 200 ms); first.length=${first.entries.length}`,
  );
  t0 = performance.now();
  const again = await checkAudit(log);
  const tAgain = performance.now() - t0;
  t0 = performance.now();
  await pageAudit(log, { limit: 50, origin: 'https://bot.example', kind: 'perps' });
  const tFiltered = performance.now() - t0;
  t0 = performance.now();
  await pageAudit(log, { limit: 50, before: Math.floor(N / 2) });
  const tDeep = performance.now() - t0;
  console.log(
    `  check with nothing new: ${ms(tAgain)} (${again.checked} verified); filtered first ` +
      `page (origin + kind): ${ms(tFiltered)}; a page from the middle (cursor): ${ms(tDeep)}`,
  );

  // Retention: the oldest ~10 % (older than 360 days), walked with a cursor.
  t0 = performance.now();
  const dropped = await pruneAudit(log, 360, now);
  const tPrune = performance.now() - t0;
  const after = await checkAudit(log);
  console.log(
    `  prune (cursor, chunks of 1 000, each entry verified before it is ` +
      `dropped): ${dropped.toLocaleString('en')} entries in ${ms(tPrune)}; ` +
      `check after: ${after.state}, ${after.count.toLocaleString('en')} entries`,
  );
  db.close();
}
