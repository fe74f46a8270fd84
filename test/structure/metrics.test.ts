/**
 * The structure limits on the non-test source (figures from `metrics.ts` and `exports.ts`): no function
 * over 200 lines, no file over 500 lines, bounded casts, `!` and undocumented exports, no import cycle
 * between files, no value-import cycle between the folders of `lib/`, no dead export. The suite fails as
 * soon as a figure passes its bound, and names the offenders.
 */
import { describe, expect, it } from 'vitest';
import { describeFolderCycle, folderCycles, measure } from './metrics';
import { testOnlyExports } from './exports';

/** The limits (a figure that grows past one fails the suite). */
const LIMITS = {
  /** Functions over 200 lines. */
  longFunctions: 0,
  /** Length of the longest function in lines. */
  longestFunction: 200,
  /** Length of the longest non-test source file in lines (split a longer file by concern). */
  longestFile: 500,
  /** `as` casts other than `as const`. */
  asCasts: 100,
  /** Non-null assertions `!`. */
  nonNull: 40,
  /** Exported declarations without a docstring comment. */
  undocumentedExports: 10,
  /** Import cycles between files, type imports included. */
  cycles: 0,
  /**
   * Import cycles between the folders of `lib/`, value imports only (a folder's code loads without the folders above
   * it).
   */
  folderCycles: 0,
  /**
   * Exports of non-test source that only tests import. Each is used by its own module too (a pure helper
   * or an error class a unit test reaches directly); one its module does not use is dead code (0 allowed).
   */
  testOnlyExports: 90,
  deadExports: 0,
};

describe('structure of the non-test source', () => {
  const m = measure();

  it('has no more long functions than the bound, none longer than the longest allowed', () => {
    expect(
      m.longFunctions.length,
      m.longFunctions.map((f) => `${f.file}:${f.line} ${f.name} ${f.lines}`).join('\n'),
    ).toBeLessThanOrEqual(LIMITS.longFunctions);
    expect(Math.max(0, ...m.longFunctions.map((f) => f.lines))).toBeLessThanOrEqual(LIMITS.longestFunction);
  });

  it('has no source file longer than the longest allowed', () => {
    expect(m.longestFile.lines, m.longFiles.map((f) => `${f.file} ${f.lines}`).join('\n')).toBeLessThanOrEqual(
      LIMITS.longestFile,
    );
  });

  it('has no more value-import cycles between the folders of lib/ than the bound', () => {
    const found = folderCycles();
    expect(found.length, found.map(describeFolderCycle).join('\n')).toBeLessThanOrEqual(LIMITS.folderCycles);
  });

  it('has no more `as` casts and non-null assertions than the bounds', () => {
    expect(m.asCasts).toBeLessThanOrEqual(LIMITS.asCasts);
    expect(m.nonNull).toBeLessThanOrEqual(LIMITS.nonNull);
  });

  it('has no more undocumented exports than the bound', () => {
    expect(m.undocumentedExports.length, m.undocumentedExports.join('\n')).toBeLessThanOrEqual(
      LIMITS.undocumentedExports,
    );
  });

  it('has no more import cycles than the bound', () => {
    expect(m.cycles.length, m.cycles.map((c) => c.join(' ↔ ')).join('\n')).toBeLessThanOrEqual(LIMITS.cycles);
  });

  it('has no more exports used only by tests than the bound', () => {
    const found = testOnlyExports();
    expect(found.length, found.map((e) => `${e.file}:${e.name}`).join('\n')).toBeLessThanOrEqual(
      LIMITS.testOnlyExports,
    );
    const dead = found.filter((e) => !e.usedInModule);
    expect(dead.length, `dead exports:\n${dead.map((e) => `${e.file}:${e.name}`).join('\n')}`).toBeLessThanOrEqual(
      LIMITS.deadExports,
    );
  }, 120_000);
});
