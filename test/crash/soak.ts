/**
 * `npm run soak`: the long crash run — `SOAK_SEEDS` seeds (default 60, from `SOAK_FIRST`, default 1) of
 * every vault write killed at a seeded instant (`vault-kills.ts`), each relaunched on the same profile and
 * checked. Prints a line per kill, then the figures: kills, how many landed before the operation answered,
 * and every broken invariant with its seed (replay one with `CRASH_SEEDS=<seed> npm run test:crash`).
 * Exits 1 when any invariant broke. Needs `npm run build` first.
 */
import { OPS, runVaultKills } from './vault-kills';

const first = Number(process.env.SOAK_FIRST ?? 1);
const count = Number(process.env.SOAK_SEEDS ?? 60);
const seeds = Array.from({ length: count }, (_, i) => first + i);

const started = Date.now();
{
  const results = await runVaultKills({ seeds, log: (line) => console.log(line) });
  const broken = results.filter((r) => r.problems.length);
  console.log(`\n== soak: ${results.length} kills over ${seeds.length} seeds (${seeds[0]}–${seeds.at(-1)}) in ${Math.round((Date.now() - started) / 1000)} s`);
  for (const op of OPS) {
    const mine = results.filter((r) => r.op === op);
    console.log(`   ${op.padEnd(22)} ${String(mine.length).padStart(4)} kills, ${String(mine.filter((r) => !r.answered).length).padStart(4)} before the answer, ${mine.filter((r) => r.problems.length).length} broken`);
  }
  for (const r of broken) console.log(`   BROKEN seed ${r.seed} ${r.op} at ${r.killAtMs} ms: ${r.problems.join('; ')}`);
  process.exitCode = broken.length ? 1 : 0;
}
