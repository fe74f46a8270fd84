/**
 * Bench-only hooks (`npm run bench`): a `wxt build --mode bench` build puts them on the
 * worker's global as `countersignBench` (the background entrypoint checks `import.meta.env.MODE`, so
 * production builds drop them). `test/bench/grant.ts` uses them to seed a grant's uses through the vault
 * API and to time the page path's stages inside the worker; `test/bench/audit-browser.ts` uses them to seed
 * the audit log and to time appends inside the worker. Nothing here is reachable from a page.
 */
import { DAY_MS, type GrantUse } from '../grants/evaluate';
import { grantUseRecords } from '../grants/use-records';
import { commandFromBody } from '../perps/commands';
import { submitPerpsCommand } from '../perps/transport';
import { verifyArtifact } from '../signer/artifact';
import { readSettings } from '../settings';
import { activeAccount } from '../accounts';
import { appendAudit, auditLog, type AuditInput } from '../audit';
import { prepare, serial, shared } from '../audit/log';
import { checkpointParts, macEntry, signParts } from '../audit/mac';
import { auditGroupOf, type AuditEntry } from '../vault/db';
import { PERSON_SCOPES } from '../authority/epoch';
import type { Background } from './index';
import { traceStart, traceStop, type TraceSpan } from './bench-trace';

/** The bench build's client-side weight budgets (weight per 60 s window): high enough that no figure meets them. */
export const BENCH_WEIGHT_BUDGETS = {
  request: { limit: 1_000_000, windowMs: 60_000 },
  action: { limit: 1_000_000, windowMs: 60_000 },
};

/** Milliseconds per run of each named stage. */
export type StageTimes = Record<string, number[]>;

/** What `benchHooks` offers the bench (see the module docstring). */
export type BenchHooks = {
  /**
   * Adds `count` uses (notional 0.000001 USDC each) to `origin`'s grant, spread over the last 24 h
   * (before its own uses), through `GrantUseRecords.putGrant`; the grant service reads them afresh. Returns the
   * grant's use count.
   */
  seedUses: (origin: string, count: number) => Promise<number>;
  /**
   * Creates a standing grant for `origin` on `account` (`GrantService.create`; `limits` as the
   * `grant.create` message takes them, `durationMs` its length), without the approval window the person
   * uses. Returns the grant's id.
   */
  grant: (o: { origin: string; account: string; limits: unknown; durationMs: number }) => Promise<string>;
  /**
   * Times each stage of a granted perps order `runs` times inside the worker: the grant check and its
   * use write (`consume`), the key read, the grant check and the artifact build side by side
   * (`consume∥prepare`, one more use each op: kept to show that running them together gains nothing,
   * the key read waits on the vault's writer lock), the artifact build (`preparePerps`), signing with submission
   * and audit (`execute`), and recording the acknowledged order (`recordOrders`), once per op of `ops`
   * (`perps_sendCommand` createOrders ops); `ref` the reference price the grant check gets. Then the
   * parts of `execute`, each op again, step by step as the signing service runs them: `exec.sign`
   * (key read, digest check, signature), `exec.settings` (one settings read; the service reads them
   * before the submit and in the transport), `exec.submit` (the send to the gateway — over the live perps session when
   * the background holds one, as the signer sends, else the REST `fetch` — and its answer's check), `exec.audit` (one
   * sealed audit append); and the request's preamble before the provider's method switch (`pre.session` the session
   * restore, `pre.connection` the origin's connection read, `pre.active` the active account read).
   */
  stages: (o: { origin: string; account: string; ops: unknown[]; ref: string }) => Promise<StageTimes>;
  /**
   * Seeds `count` sealed audit entries (`benchAuditEntry`, `at` Unix ms spread evenly from `from` to
   * `to`) after the log's newest, `perTx` per IndexedDB transaction, under the log's append lock: each
   * chained with the log's own MAC (`macEntry`, the vault's audit key) and committed with its MAC'd
   * checkpoint in the same transaction, as `appendAudit` leaves them (a full `checkAudit` verifies every
   * one). Needs the vault unlocked (throws otherwise). Returns the log's entry count after.
   */
  seedAudit: (o: { count: number; perTx: number; from: number; to: number }) => Promise<number>;
  /**
   * Appends `count` entries (`benchAuditEntry`, `at` now) one after another through `appendAudit`, as the
   * signer records a signature; returns each append's time in ms (call → resolved).
   */
  appendAudit: (count: number) => Promise<number[]>;
  /** Starts tracing the page path's calls in the worker (`bench-trace.ts` `traceStart`). */
  traceStart: () => Promise<void>;
  /** Stops tracing; the spans recorded (`bench-trace.ts` `traceStop`). */
  traceStop: () => TraceSpan[];
};

const BENCH_ORIGINS = ['https://app.example', 'https://bot.example', 'extension', 'dead-man'];

/**
 * The bench's audit entry number `i` at `at` (Unix ms): mostly granted perps and order-book orders
 * from two sites, with a dead-man period and a permission entry now and then — summaries of the
 * length the signer writes, a 32-byte digest, result `ok`.
 */
export function benchAuditEntry(i: number, at: number): AuditInput {
  const kind =
    i % 50 === 0
      ? 'deadman.period'
      : i % 97 === 0
        ? 'grant.create'
        : i % 3 === 0
          ? 'clob.postOrders'
          : 'perps.createOrders';
  const origin = kind === 'deadman.period' ? 'dead-man' : BENCH_ORIGINS[i % 3]!;
  const summary =
    kind === 'deadman.period'
      ? `Kill switches armed for 1 h: 450 renewals, last at ${new Date(at).toISOString()}`
      : kind === 'clob.postOrders'
        ? `Buy 25 shares of "Yes" at 0.${String(10 + (i % 89))} (GTC), order book — request weight 1`
        : `Buy 0.01 BTC-PERP at 64,${String(i % 1000).padStart(3, '0')}.00, ` +
          `good-til-cancelled, post-only — request weight 1`;
  return {
    at,
    origin,
    account: '0x5b38da6a701c568545dcfcb03fcb875f56beddc4',
    kind,
    summary,
    digest: `0x${(i * 2654435761).toString(16).padStart(64, '0').slice(-64)}`,
    result: 'ok',
  };
}

/** The bench hooks of a running background. */
export function benchHooks(bg: Background): BenchHooks {
  return {
    async seedUses(origin, count) {
      await bg.ready;
      const vault = grantUseRecords(bg.vault());
      const found = (await vault.listGrants()).find((g) => g.grant.origin === origin);
      if (!found) throw new Error(`no grant for ${origin}`);
      const now = Date.now();
      const step = (DAY_MS - 5 * 60_000) / count;
      const top = found.uses.reduce((a, u) => Math.max(a, u.seq ?? 0), 0);
      const seeded: GrantUse[] = Array.from({ length: count }, (_, i) => ({
        at: Math.floor(now - DAY_MS + 60_000 + i * step),
        notional: '0.000001',
        seq: top + 1 + i,
      }));
      await vault.putGrant(found.grant, [...seeded, ...found.uses]);
      bg.grants().reload();
      return seeded.length + found.uses.length;
    },
    async grant({ origin, account, limits, durationMs }) {
      await bg.ready;
      return (await bg.grants().create({ origin, account, limits: limits as never, durationMs })).id;
    },
    async stages({ origin, account, ops, ref }) {
      await bg.ready;
      const out: StageTimes = {
        consume: [],
        proxyFor: [],
        'consume∥prepare': [],
        preparePerps: [],
        execute: [],
        recordOrders: [],
        'exec.sign': [],
        'exec.settings': [],
        'exec.submit': [],
        'exec.audit': [],
        'pre.session': [],
        'pre.connection': [],
        'pre.active': [],
      };
      const time = async <T>(name: string, fn: () => Promise<T>): Promise<T> => {
        const t0 = performance.now();
        const r = await fn();
        out[name]?.push(performance.now() - t0);
        return r;
      };
      for (const [i, op] of ops.entries()) {
        const cmd = commandFromBody(op);
        const decision = await time('consume', () =>
          bg.grants().consume(
            origin,
            account,
            {
              kind: 'order',
              venue: 'perps',
              orders: [{ market: '2', buy: true, size: '0.01', price: ref, postOnly: true }],
            },
            async () => ({ price: ref, source: 'mark' }),
            async () => true,
          ),
        );
        await time('proxyFor', () => bg.vault().proxyFor(account));
        // The artifact built while the grant is asked (measured for comparison; the provider keeps them in sequence).
        await time('consume∥prepare', () =>
          Promise.all([
            bg.grants().consume(
              origin,
              account,
              {
                kind: 'order',
                venue: 'perps',
                orders: [{ market: '2', buy: true, size: '0.01', price: ref, postOnly: true }],
              },
              async () => ({ price: ref, source: 'mark' }),
              async () => true,
            ),
            bg.service().preparePerps(account, cmd, { submit: true }),
          ]),
        );
        const artifact = await time('preparePerps', () => bg.service().preparePerps(account, cmd, { submit: true }));
        await time('execute', () =>
          bg.service().execute(artifact, artifact.digest, {
            origin,
            summary: 'bench',
            authority: bg.service().authority.capture(PERSON_SCOPES),
          }),
        );
        if (decision?.ok)
          await time('recordOrders', () =>
            bg.grants().recordOrders(decision.grantId, decision.seq, [{ oid: 1_000_000 + i }]),
          );
      }
      const log = auditLog(bg.db(), () => bg.vault().auditKey());
      for (const op of ops) {
        const artifact = await bg.service().preparePerps(account, commandFromBody(op), { submit: true });
        const sig = await time('exec.sign', async () => {
          const { signer } = await bg.vault().proxyFor(account);
          const [digest] = verifyArtifact(artifact, artifact.digest);
          if (!signer.sign || !digest) throw new Error('cannot sign');
          return signer.sign({ hash: digest });
        });
        const { perpsUrl } = await time('exec.settings', () => readSettings(bg.db()));
        // Another salt and signature would be a new order: send this envelope as is (the sandbox checks the
        // signature), over the transport the signer picks (the live session, else REST).
        await time('exec.submit', () =>
          submitPerpsCommand({
            perpsUrl,
            command: artifact,
            envelope: { ...artifact.envelope, sig },
            signerAddress: artifact.signerAddress,
            fetchFn: fetch,
            timeoutMs: 15_000,
            session: bg.session(account, perpsUrl),
          }),
        );
        await time('exec.audit', () =>
          appendAudit(log, {
            at: Date.now(),
            origin,
            account: account.toLowerCase(),
            kind: 'perps.createOrders',
            summary: 'bench',
            result: 'ok',
            digest: artifact.digest,
          }),
        );
        await time('pre.session', () => bg.vault().restoreSession());
        await time('pre.connection', () => bg.db().get('connections', origin));
        await time('pre.active', () => activeAccount(bg.db(), bg.vault()));
      }
      return out;
    },
    async seedAudit({ count, perTx, from, to }) {
      await bg.ready;
      const log = auditLog(bg.db(), () => bg.vault().auditKey());
      const key = await log.key();
      if (!key) throw new Error('the vault is locked');
      const s = shared(log.db);
      return serial(s, 'tail', async () => {
        let c = await prepare(log, key, true);
        for (let done = 0; done < count;) {
          const n = Math.min(perTx, count - done);
          const batch: AuditEntry[] = [];
          let head = c.head;
          for (let k = 0; k < n; k++) {
            const id = c.lastId + 1 + k;
            const input = benchAuditEntry(id, Math.floor(from + ((to - from) * (done + k)) / Math.max(1, count - 1)));
            const e: AuditEntry = { ...input, group: auditGroupOf(input.kind) } as AuditEntry;
            const mac = await macEntry(key, e, id, head);
            batch.push({ ...e, id, prev: head, mac });
            head = mac;
          }
          const { mac: _old, ...rest } = c;
          const next = {
            ...rest,
            count: c.count + n,
            firstId: c.count === 0 ? c.lastId + 1 : c.firstId,
            lastId: c.lastId + n,
            head,
          };
          const sealed = { ...next, mac: await signParts(key, checkpointParts(next)) };
          const tx = log.db.transaction(['audit', 'meta'], 'readwrite');
          for (const e of batch) void tx.objectStore('audit').put(e);
          void tx.objectStore('meta').put(sealed);
          await tx.done;
          s.cp = { key, c: sealed };
          c = sealed;
          done += n;
        }
        return c.count;
      });
    },
    async appendAudit(count) {
      await bg.ready;
      const log = auditLog(bg.db(), () => bg.vault().auditKey());
      const times: number[] = [];
      for (let i = 0; i < count; i++) {
        const t0 = performance.now();
        await appendAudit(log, benchAuditEntry(i, Date.now()));
        times.push(performance.now() - t0);
      }
      return times;
    },
    async traceStart() {
      await bg.ready;
      traceStart(bg);
    },
    traceStop,
  };
}
