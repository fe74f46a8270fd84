/**
 * The panic audit entry is written before the lock (after it there is no audit key), so it never claims
 * the vault is locked; a lock that then fails gets an entry of its own, and the report is not ok.
 * `runPanic` with a vault whose lock fails and no accounts.
 */
import { describe, expect, it } from 'vitest';
import { Authority } from '../authority/epoch';
import { BaseError } from '../errors/base';
import { runPanic, type PanicReport } from './panic';

type PanicDeps = Parameters<typeof runPanic>[0];

/** Panic's dependencies around a vault holding no account; `lock` as given. */
function deps(lock: () => Promise<void>, state: { vault: string }) {
  const entries: { report: PanicReport; stepsOk: boolean }[] = [];
  const lockFailures: string[] = [];
  const d: PanicDeps = {
    account: async () => undefined,
    vault: {
      get state() {
        return state.vault;
      },
      listOwners: async () => [],
      forgetRestorable: async () => undefined,
    } as unknown as PanicDeps['vault'],
    service: {
      authority: new Authority(),
      halt: () => Promise.resolve({ unsettled: 0 }),
    } as unknown as PanicDeps['service'],
    reads: { perpsRead: async () => [] },
    closePositions: false,
    revokeGrants: async () => 0,
    rejectPending: () => 0,
    audit: async (report, stepsOk) => void entries.push({ report: structuredClone(report), stepsOk }),
    auditLockFailed: async (problem) => void lockFailures.push(problem),
    lock,
    timing: { drainMs: 10, venuesMaxMs: 100, requestTimeoutMs: 50 },
  };
  return { d, entries, lockFailures };
}

describe('the panic audit entry', () => {
  it(
    'says what was done before the lock, never that the vault is ' +
      'locked; a lock that fails is audited and the report is not ok',
    async () => {
      const state = { vault: 'unlocked' };
      const { d, entries, lockFailures } = deps(async () => {
        throw new BaseError('the vault database is not answering');
      }, state);
      const report = await runPanic(d);
      expect(entries).toHaveLength(1);
      expect(entries[0]!.report.locked).toBe(false);
      expect(entries[0]!.stepsOk).toBe(true);
      expect(report).toMatchObject({ ok: false, locked: false });
      expect(report.problems).toContain('Locking: the vault database is not answering');
      expect(lockFailures).toEqual(['Locking: the vault database is not answering']);
    },
  );

  it('a lock that succeeds adds no entry, and the report is ok', async () => {
    const state = { vault: 'unlocked' };
    const { d, entries, lockFailures } = deps(async () => void (state.vault = 'locked'), state);
    const report = await runPanic(d);
    expect(entries).toHaveLength(1);
    expect(report).toMatchObject({ ok: true, locked: true, problems: [] });
    expect(lockFailures).toEqual([]);
  });
});
