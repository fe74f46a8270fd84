/**
 * The issue #18 structure limits on the non-test source (figures from `metrics.ts` and `exports.ts`).
 * Each bound is the issue's target; the suite fails as soon as a figure passes it.
 */
import { describe, expect, it } from 'vitest';
import { measure } from './metrics';
import { testOnlyExports } from './exports';

/** The issue #18 "Done when" limits (reached on 2026-11-23; a figure that grows fails the suite). */
const LIMITS = {
  /** Functions over 200 lines. */
  longFunctions: 0,
  /** Length of the longest function in lines. */
  longestFunction: 200,
  /** `as` casts other than `as const` (issue: ≤ 100; today 29). */
  asCasts: 100,
  /** Non-null assertions `!` (issue: ≤ 40). */
  nonNull: 40,
  /** Exported declarations without a docstring comment (issue: ≤ 10). */
  undocumentedExports: 10,
  /** Import cycles between files, type imports included. */
  cycles: 0,
  /**
   * Exports of non-test source that only tests import. Each is used by its own module too (a pure helper
   * or an error class a unit test reaches directly); one its module does not use is dead code (0 allowed).
   */
  testOnlyExports: 90,
  deadExports: 0,
}

describe('structure of the non-test source (issue #18)', () => {
  const m = measure();

  it('has no more long functions than the bound, none longer than the longest allowed', () => {
    expect(m.longFunctions.length, m.longFunctions.map((f) => `${f.file}:${f.line} ${f.name} ${f.lines}`).join('\n')).toBeLessThanOrEqual(LIMITS.longFunctions);
    expect(Math.max(0, ...m.longFunctions.map((f) => f.lines))).toBeLessThanOrEqual(LIMITS.longestFunction);
  });

  it('has no more `as` casts and non-null assertions than the bounds', () => {
    expect(m.asCasts).toBeLessThanOrEqual(LIMITS.asCasts);
    expect(m.nonNull).toBeLessThanOrEqual(LIMITS.nonNull);
  });

  it('has no more undocumented exports than the bound', () => {
    expect(m.undocumentedExports.length, m.undocumentedExports.join('\n')).toBeLessThanOrEqual(LIMITS.undocumentedExports);
  });

  it('has no more import cycles than the bound', () => {
    expect(m.cycles.length, m.cycles.map((c) => c.join(' ↔ ')).join('\n')).toBeLessThanOrEqual(LIMITS.cycles);
  });

  it('has no more exports used only by tests than the bound', () => {
    const found = testOnlyExports();
    expect(found.length, found.map((e) => `${e.file}:${e.name}`).join('\n')).toBeLessThanOrEqual(LIMITS.testOnlyExports);
    const dead = found.filter((e) => !e.usedInModule);
    expect(dead.length, `dead exports:\n${dead.map((e) => `${e.file}:${e.name}`).join('\n')}`).toBeLessThanOrEqual(LIMITS.deadExports);
  }, 120_000);
});
