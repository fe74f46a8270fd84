/**
 * The short crash run of `npm test`: one seed (`CRASH_SEEDS` to change it, comma-separated), each vault
 * write killed once at a seeded instant in real Chromium, relaunched on the same profile; every invariant
 * of `vault-kills.ts` holds. The long run is `npm run soak` (its figures in `test/bench/README.md`, "Crash soak").
 */
import { describe, expect, it } from 'vitest';
import { runVaultKills } from './vault-kills';

const seeds = (process.env.CRASH_SEEDS ?? '7').split(',').map(Number);

describe('a browser killed inside a vault write (Chromium)', () => {
  it('comes back with the vault, exactly one password and every key the person was told was saved', { timeout: 300_000 }, async () => {
    const results = await runVaultKills({ seeds, log: (line) => console.log(line) });
    expect(results.length).toBeGreaterThan(0);
    expect(results.filter((r) => r.problems.length).map((r) => `seed ${r.seed} ${r.op} at ${r.killAtMs} ms: ${r.problems.join('; ')}`)).toEqual([]);
  });
});
