/**
 * `npm run soak`: the long crash run — `SOAK_SEEDS` seeds (default 60, from `SOAK_FIRST`, default 1) of
 * every vault write (`vault-kills.ts`) and every trading operation (`trade-kills.ts`) killed at a seeded
 * instant, each relaunched on the same profile and checked (`SOAK_FAMILIES`, default `vault,trade`, runs
 * one family alone). Prints a line per kill, then the figures per family and operation: kills, how many
 * landed before the operation's (first) answer, how many broke, and every broken invariant with its seed
 * (replay one with `CRASH_SEEDS=<seed> npm run test:crash`). Exits 1 when any invariant broke. Needs
 * `npm run build` first.
 */
import { OPS, runVaultKills } from './vault-kills';
import { TRADE_OPS, runTradeKills } from './trade-kills';

const first = Number(process.env.SOAK_FIRST ?? 1);
const count = Number(process.env.SOAK_SEEDS ?? 60);
const families = (process.env.SOAK_FAMILIES ?? 'vault,trade').split(',');
const seeds = Array.from({ length: count }, (_, i) => first + i);

/** A kill as the figures read it. */
type Row = { seed: number; op: string; killAtMs: number; answered: boolean; problems: string[] };

/** Prints one family's figures (a line per operation of `ops`, then each broken kill); answers how many broke. */
function figures(name: string, ops: readonly string[], results: readonly Row[], ms: number): number {
  const broken = results.filter((r) => r.problems.length);
  console.log(
    `\n== soak (${name}): ${results.length} kills over ${seeds.length} ` +
      `seeds (${seeds[0]}–${seeds.at(-1)}) in ${Math.round(ms / 1000)} s`,
  );
  for (const op of ops) {
    const mine = results.filter((r) => r.op === op);
    console.log(
      `   ${op.padEnd(22)} ${String(mine.length).padStart(4)} kills, ` +
        `${String(mine.filter((r) => !r.answered).length).padStart(4)} ` +
        `before the answer, ${mine.filter((r) => r.problems.length).length} broken`,
    );
  }
  for (const r of broken) console.log(`   BROKEN seed ${r.seed} ${r.op} at ${r.killAtMs} ms: ${r.problems.join('; ')}`);
  return broken.length;
}

const runs: { name: string; ops: readonly string[]; results: Row[]; ms: number }[] = [];
if (families.includes('vault')) {
  const started = Date.now();
  const results = await runVaultKills({ seeds, log: (line) => console.log(line) });
  runs.push({ name: 'vault writes', ops: OPS, results, ms: Date.now() - started });
}
if (families.includes('trade')) {
  const started = Date.now();
  const results = await runTradeKills({ seeds, log: (line) => console.log(line) });
  runs.push({ name: 'trades', ops: TRADE_OPS, results, ms: Date.now() - started });
}
let broken = 0;
for (const run of runs) broken += figures(run.name, run.ops, run.results, run.ms);
process.exitCode = broken ? 1 : 0;
