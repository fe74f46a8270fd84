/**
 * The issue #18 structure limits on the non-test source (figures from `metrics.ts` and `exports.ts`).
 * Each bound is today's figure, so the suite passes while the parts are still being reduced and fails
 * as soon as a figure grows; the lead lowers each bound to its target (in the comment) after merging.
 */
import { describe, expect, it } from 'vitest';
import { measure } from './metrics';
import { testOnlyExports } from './exports';

/** Current bounds (hygiene branch, 2026-11-23) → targets of issue #18 "Done when". */
const LIMITS = {
  /** Functions over 200 lines (target 0). */
  longFunctions: 5,
  /** Length of the longest function in lines (target ≤ 200). */
  longestFunction: 740,
  /** `as` casts other than `as const` (target ≤ 100). */
  asCasts: 173,
  /** Non-null assertions `!` (target ≤ 40). */
  nonNull: 134,
  /** Exported declarations without a docstring comment (target ≤ 10). */
  undocumentedExports: 89,
  /** Import cycles between files, type imports included (target 0). */
  cycles: 1,
  /** Exports of non-test source that only tests import (target 0). */
  testOnlyExports: 54,
};

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
  }, 120_000);
});
