/**
 * The short crash run of `npm test`: one seed (`CRASH_SEEDS` to change it, comma-separated) in real
 * Chromium, each operation killed once at a seeded instant and relaunched on the same profile — every vault
 * write (`vault-kills.ts`) and every trading operation a site or the person starts (`trade-kills.ts`: a granted burst,
 * an approved order, a keyed order retried after the relaunch on both venues, a revoke, panic, a settings change).
 * Every invariant of both holds. The long run is `npm run soak` (its figures in `test/bench/README.md`, "Crash soak").
 */
import { describe, expect, it } from 'vitest';
import { runVaultKills } from './vault-kills';
import { runTradeKills } from './trade-kills';

const seeds = (process.env.CRASH_SEEDS ?? '7').split(',').map(Number);

describe('a browser killed inside a vault write (Chromium)', () => {
  it(
    'comes back with the vault, exactly one password and every key the person was told was saved',
    { timeout: 300_000 },
    async () => {
      const results = await runVaultKills({ seeds, log: (line) => console.log(line) });
      expect(results.length).toBeGreaterThan(0);
      expect(
        results
          .filter((r) => r.problems.length)
          .map((r) => `seed ${r.seed} ${r.op} at ${r.killAtMs} ms: ${r.problems.join('; ')}`),
      ).toEqual([]);
    },
  );
});

describe('a browser killed inside a trade (Chromium)', () => {
  it(
    'comes back with nothing sent twice, every accepted order in an audit ' +
      'log that lost nothing, no grant live or exceeded, settings whole',
    { timeout: 300_000 },
    async () => {
      const results = await runTradeKills({ seeds, log: (line) => console.log(line) });
      expect(results.length).toBeGreaterThan(0);
      expect(
        results
          .filter((r) => r.problems.length)
          .map((r) => `seed ${r.seed} ${r.op} at ${r.killAtMs} ms: ${r.problems.join('; ')}`),
      ).toEqual([]);
    },
  );
});
