/**
 * Bench-only hooks (`npm run bench`): a `wxt build --mode bench` build puts them on the
 * worker's global as `countersignBench` (the background entrypoint checks `import.meta.env.MODE`, so
 * production builds drop them). `test/bench/grant.ts` uses them to seed a grant's uses through the vault
 * API and to time the page path's stages inside the worker. Nothing here is reachable from a page.
 */
import { DAY_MS, type GrantUse } from '../grants/evaluate';
import { grantUseRecords } from '../grants/use-records';
import { commandFromBody } from '../perps/commands';
import { submitPerpsCommand } from '../perps/transport';
import { verifyArtifact } from '../signer/artifact';
import { readSettings } from '../settings';
import { activeAccount } from '../accounts';
import { appendAudit, auditLog } from '../audit';
import { PERSON_SCOPES } from '../authority/epoch';
import type { Background } from './index';

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
   * Times each stage of a granted perps order `runs` times inside the worker: the grant check and its
   * use write (`consume`), the key read, the grant check and the artifact build side by side
   * (`consume∥prepare`, one more use each op: kept to show that running them together gains nothing,
   * the key read waits on the vault's writer lock), the artifact build (`preparePerps`), signing with submission
   * and audit (`execute`), and recording the acknowledged order (`recordOrders`), once per op of `ops`
   * (`perps_sendCommand` createOrders ops); `ref` the reference price the grant check gets. Then the
   * parts of `execute`, each op again, step by step as the signing service runs them: `exec.sign`
   * (key read, digest check, signature), `exec.settings` (one settings read; the service reads them
   * before the submit and in the transport), `exec.submit` (the send to the gateway — over the live perps session when the background holds one, as the signer sends, else the REST `fetch` — and its answer's
   * check), `exec.audit` (one sealed audit append); and the request's preamble before the provider's
   * method switch (`pre.session` the session restore, `pre.connection` the origin's connection read,
   * `pre.active` the active account read).
   */
  stages: (o: { origin: string; account: string; ops: unknown[]; ref: string }) => Promise<StageTimes>;
};

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
      const seeded: GrantUse[] = Array.from({ length: count }, (_, i) => ({ at: Math.floor(now - DAY_MS + 60_000 + i * step), notional: '0.000001', seq: top + 1 + i }));
      await vault.putGrant(found.grant, [...seeded, ...found.uses]);
      bg.grants().reload();
      return seeded.length + found.uses.length;
    },
    async stages({ origin, account, ops, ref }) {
      await bg.ready;
      const out: StageTimes = { consume: [], proxyFor: [], 'consume∥prepare': [], preparePerps: [], execute: [], recordOrders: [], 'exec.sign': [], 'exec.settings': [], 'exec.submit': [], 'exec.audit': [], 'pre.session': [], 'pre.connection': [], 'pre.active': [] };
      const time = async <T>(name: string, fn: () => Promise<T>): Promise<T> => {
        const t0 = performance.now();
        const r = await fn();
        out[name]?.push(performance.now() - t0);
        return r;
      };
      for (const [i, op] of ops.entries()) {
        const cmd = commandFromBody(op);
        const decision = await time('consume', () =>
          bg.grants().consume(origin, account, { kind: 'order', venue: 'perps', orders: [{ market: '2', buy: true, size: '0.01', price: ref, postOnly: true }] }, async () => ({ price: ref, source: 'mark' }), async () => true),
        );
        await time('proxyFor', () => bg.vault().proxyFor(account));
        // The artifact built while the grant is asked (measured for comparison; the provider keeps them in sequence).
        await time('consume∥prepare', () => Promise.all([bg.grants().consume(origin, account, { kind: 'order', venue: 'perps', orders: [{ market: '2', buy: true, size: '0.01', price: ref, postOnly: true }] }, async () => ({ price: ref, source: 'mark' }), async () => true), bg.service().preparePerps(account, cmd, { submit: true })]));
        const artifact = await time('preparePerps', () => bg.service().preparePerps(account, cmd, { submit: true }));
        await time('execute', () => bg.service().execute(artifact, artifact.digest, { origin, summary: 'bench', authority: bg.service().authority.capture(PERSON_SCOPES) }));
        if (decision?.ok) await time('recordOrders', () => bg.grants().recordOrders(decision.grantId, decision.seq, [{ oid: 1_000_000 + i }]));
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
        await time('exec.submit', () => submitPerpsCommand({ perpsUrl, command: artifact, envelope: { ...artifact.envelope, sig }, signerAddress: artifact.signerAddress, fetchFn: fetch, timeoutMs: 15_000, session: bg.session(account, perpsUrl) }));
        await time('exec.audit', () => appendAudit(log, { at: Date.now(), origin, account: account.toLowerCase(), kind: 'perps.createOrders', summary: 'bench', result: 'ok', digest: artifact.digest }));
        await time('pre.session', () => bg.vault().restoreSession());
        await time('pre.connection', () => bg.db().get('connections', origin));
        await time('pre.active', () => activeAccount(bg.db(), bg.vault()));
      }
      return out;
    },
  };
}
