/**
 * Kills inside trading operations (test-only), with the crash harness (`harness.ts`): for each seed, a
 * fresh profile and a fresh in-process sandbox; the profile is onboarded (password, the sandbox's demo
 * owner and proxy keys, order-book credentials) and the sandbox's demo page (a site) connected. Then each
 * operation of `TRADE_OPS` runs on a freshly launched and unlocked browser, the browser's process group
 * is SIGKILLed at a seeded instant inside it, the browser is relaunched on the same profile and unlocked,
 * the background is given a moment (it reconciles what was in flight with the venue after the first
 * unlock), and the invariants are checked against the sandbox's own records (`trade-checks.ts`):
 *
 * - nothing sent twice: no client order id on two accepted orders, no two accepted orders alike (every
 *   request is distinct by its size, so a second signature of one request shows);
 * - nothing unrecorded: every order a venue accepted since the operation started has an audit entry
 *   (`ok` or `unknown`) within a few seconds of unlock;
 * - grants end with the browser: no live grant after the relaunch;
 * - a grant never let the site exceed its 24 h cap;
 * - per operation: the keyed retry after the relaunch never makes a second order; settings read wholly
 *   old or wholly new (new when the change was reported done); panic leaves the vault openable, and what
 *   it left resting is reported (a problem only when panic had answered that it was done).
 *
 * Used by `crash.test.ts` (one seed in `npm test`) and `soak.ts` (`npm run soak`).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSandbox, type RunningSandbox } from '../../lib/sandbox/server';
import { launchOn, pointAt, seeded, unlock, type Running } from './harness';
import { acceptedSince, liveGrants, markOrders, sentTwice, unrecorded, type OrderMark } from './trade-checks';
import { ensureConnected, openDemo } from './trade-page';
import { OP_STARTS, TRADE_OPS, type Started, type TradeOp } from './trade-ops';

export { TRADE_OPS, type TradeOp };

/**
 * One kill: where it landed (`killAtMs`, ms after the operation's timed part began), whether any answer
 * had come (`answered`) and the answers in words, the broken invariants (`problems`), what is worth
 * knowing but breaks nothing (`notes`), and with `measure` how long the operation took (`tookMs`, ms to
 * its last answer).
 */
export type TradeKillResult = {
  seed: number;
  op: TradeOp;
  killAtMs: number;
  answered: boolean;
  words: string;
  problems: string[];
  notes: string[];
  tookMs?: number;
};

/**
 * How long after an operation's timed part begins a kill may land (ms): a little past its usual duration
 * on this machine, measured with `measure` (see `runTradeKills`; seeds 1-4, ms to the last answer): the
 * burst's five answers under the cap 145-190 (the other three wait in a window), an approved order from
 * the click 100-105, a keyed retry's first send 75-160, revoke inside a burst 130-175, panic with three
 * resting orders 45-50, a settings change 7-9.
 */
const WINDOW_MS: Record<TradeOp, number> = {
  grantedBurst: 250,
  approvedOrder: 150,
  retrySameKey: 200,
  retrySameKeyBook: 200,
  revoke: 250,
  panic: 80,
  settings: 15,
};
/** After the relaunch and unlock: the moment the background is given before anything is checked (ms). */
const SETTLE_MS = 1_000;
/** How long the audit log is polled for an accepted order's entry after that (ms). */
const RECORD_WAIT_MS = 5_000;
/** With `measure`: how long an operation is given to answer before the kill (ms). */
const MEASURE_WAIT_MS = 5_000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Onboards a fresh `profile` on `sandbox`: vault, demo owner and proxy keys, order-book credentials, the demo page
 * connected; locked and closed.
 */
async function onboard(profile: string, sandbox: RunningSandbox, password: string): Promise<void> {
  const r = await launchOn(profile);
  try {
    await pointAt(r, sandbox);
    const owner = sandbox.demo.owner;
    const p = sandbox.demo.proxy;
    for (const [type, payload] of [
      ['vault.create', { password }],
      ['vault.importOwnerKey', { privateKey: owner.privateKey }],
      [
        'proxy.import',
        { account: owner.address, privateKey: p.privateKey, proxy: p.address, secret: p.secret, expiry: p.expiry },
      ],
      ['clob.createOrDerive', { account: owner.address }],
    ] as const) {
      const reply = await r.call(type, payload);
      if (!reply.ok) throw new Error(`onboarding ${type}: ${JSON.stringify(reply.error)}`);
    }
    await ensureConnected(r, await openDemo(r, sandbox));
    await r.call('vault.lock');
  } finally {
    await r.close();
  }
}

/** How many entries the audit log holds (`audit.verify`'s count; the vault unlocked). Throws when it cannot be read. */
async function auditCount(r: Running): Promise<number> {
  const reply = await r.call('audit.verify', {});
  const count = (reply.result as { count?: unknown } | undefined)?.count;
  if (!reply.ok || typeof count !== 'number') throw new Error(`audit.verify: ${JSON.stringify(reply.error)}`);
  return count;
}

/**
 * The audit log keeps what it had: entries written before the kill are still there after it — unless the
 * browser discarded the database (Chromium can find the profile's IndexedDB corrupt after a SIGKILL and
 * delete it whole; `fromCopy`: the unlock restored the vault from its second copy). Then the log is gone
 * with it, which the product cannot prevent: it tells the person and records the venues' orders instead
 * (`lib/audit/lost-storage.ts`; the "nothing unrecorded" check still holds it to every accepted order).
 */
function lost(before: number, after: number, fromCopy: boolean): { problems: string[]; notes: string[] } {
  if (after >= before) return { problems: [], notes: [] };
  const what = `the audit log shrank from ${before} to ${after} entries across the kill`;
  return fromCopy
    ? { problems: [], notes: [`${what}: the browser discarded the database (the vault came back from its copy)`] }
    : { problems: [`${what} (entries written before it are gone)`], notes: [] };
}

/** The seed's fixed parts: its number, PRNG, sandbox, profile and password. */
type SeedRun = {
  seed: number;
  rng: ReturnType<typeof seeded>;
  sandbox: RunningSandbox;
  profile: string;
  password: string;
};

/**
 * Runs `op` once on `s`'s profile: launch, unlock, the demo page, the operation started and killed at a
 * seeded instant (with `measure`: once it answered, at most `MEASURE_WAIT_MS` later), relaunch, unlock,
 * the checks. The browser is closed at the end whatever happened.
 */
async function killOne(s: SeedRun, op: TradeOp, measure: boolean): Promise<TradeKillResult> {
  const owner = s.sandbox.demo.owner.address.toLowerCase();
  let r: Running | undefined = await launchOn(s.profile);
  try {
    const up = await unlock(r, s.password);
    if (!up.ok) throw new Error(`seed ${s.seed} before ${op}: ${JSON.stringify(up.error)}`);
    const demo = await openDemo(r, s.sandbox);
    // A kill that cost the profile its database (see `lost`) took the site's connection with it.
    const reconnected = await ensureConnected(r, demo);
    const killAtMs = s.rng.int(0, WINDOW_MS[op]);
    let mark: OrderMark | undefined;
    let entriesBefore = 0;
    const running = r; // the browser the operation starts in (`r` is the relaunched one later)
    const begin = async (): Promise<void> => {
      entriesBefore = await auditCount(running);
      mark = markOrders(s.sandbox, owner);
    };
    const started: Started = await OP_STARTS[op]({
      seed: s.seed,
      rng: s.rng,
      sandbox: s.sandbox,
      r,
      demo,
      owner,
      killAtMs,
      begin,
    });
    const begun = mark ?? markOrders(s.sandbox, owner);
    const settled = started.answer.then(
      () => undefined,
      () => undefined,
    );
    if (measure) await Promise.race([settled, sleep(MEASURE_WAIT_MS)]);
    else await sleep(Math.max(0, killAtMs - (Date.now() - begun.at)));
    const got = started.answers();
    await r.kill();
    await settled;
    r = await launchOn(s.profile);
    const base = {
      seed: s.seed,
      op,
      killAtMs: measure ? Date.now() - begun.at : killAtMs,
      answered: got.count > 0,
      words: got.words,
      ...(measure && got.lastAt !== undefined ? { tookMs: got.lastAt - begun.at } : {}),
    };
    const fromCopy =
      ((await r.call('vault.status')).result as { recoverable?: boolean } | undefined)?.recoverable === true;
    const reopened = await unlock(r, s.password);
    if (!reopened.ok)
      return {
        ...base,
        problems: [
          `the vault does not open after the relaunch (${reopened.error?.name}: ${reopened.error?.shortMessage})`,
        ],
        notes: [],
      };
    await sleep(SETTLE_MS);
    const notes = [
      ...(reconnected ? ['the site was no longer connected before this kill (connected again)'] : []),
      ...(fromCopy
        ? [
            'after the relaunch the profile held no vault, or an older ' +
              'one than its second copy: the unlock restored it from the copy',
          ]
        : []),
    ];
    notes.push(...((await started.after?.(r)) ?? []));
    const accepted = acceptedSince(s.sandbox, owner, begun);
    const own = await started.check?.(r, accepted);
    const shrank = lost(entriesBefore, await auditCount(r), fromCopy);
    const problems = [
      ...shrank.problems,
      ...sentTwice(accepted),
      ...(await unrecorded(r, accepted, begun.at, RECORD_WAIT_MS)),
      ...(await liveGrants(r)),
      ...(own?.problems ?? []),
    ];
    return { ...base, problems, notes: [...notes, ...shrank.notes, ...(own?.notes ?? [])] };
  } finally {
    await r?.close();
  }
}

/**
 * Runs every operation of `ops` (default `TRADE_OPS`) once per seed of `seeds`, each killed at a seeded
 * instant; `log` receives a line per kill. Each seed uses a fresh profile and a fresh in-process sandbox,
 * both removed afterwards. With `measure`, no seeded instant: each operation is given up to 5 s to answer
 * and killed then, and `tookMs` says how long it took (what `WINDOW_MS` is set from). `CRASH_KEEP_PROFILES=1`
 * keeps each seed's profile (its path is logged) to look into after a failure.
 */
export async function runTradeKills(o: {
  seeds: readonly number[];
  ops?: readonly TradeOp[];
  log?: (line: string) => void;
  measure?: boolean;
}): Promise<TradeKillResult[]> {
  const results: TradeKillResult[] = [];
  for (const seed of o.seeds) {
    const s: SeedRun = {
      seed,
      rng: seeded(seed),
      sandbox: await startSandbox(0, { now: undefined }),
      profile: mkdtempSync(join(tmpdir(), 'countersign-trade-')),
      password: `trade password ${seed}`,
    };
    try {
      await onboard(s.profile, s.sandbox, s.password);
      for (const op of o.ops ?? TRADE_OPS) {
        // A kill that could not be set up or checked is a broken run, and the next operation starts afresh.
        const result: TradeKillResult = await killOne(s, op, o.measure ?? false).catch(
          (err: unknown): TradeKillResult => ({
            seed,
            op,
            killAtMs: -1,
            answered: false,
            words: 'not run',
            problems: [
              `the kill could not be set up or checked: ` +
                `${err instanceof Error ? err.message.split('\n')[0] : String(err)}`,
            ],
            notes: [],
          }),
        );
        results.push(result);
        const took = result.tookMs === undefined ? '' : `, took ${result.tookMs} ms`;
        const verdict = result.problems.length ? `BROKEN: ${result.problems.join('; ')}` : 'holds';
        o.log?.(
          `seed ${seed} ${op} killed at ${result.killAtMs} ms (${result.words}${took}): ` +
            `${verdict}${result.notes.length ? ` [${result.notes.join('; ')}]` : ''}`,
        );
      }
    } finally {
      await s.sandbox.close();
      if (process.env.CRASH_KEEP_PROFILES) o.log?.(`seed ${seed}: profile kept at ${s.profile}`);
      else rmSync(s.profile, { recursive: true, force: true });
    }
  }
  return results;
}
