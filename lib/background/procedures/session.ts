/**
 * Handlers of the session procedures: a person's presence and the panic switch (contract: lib/messaging/session.ts).
 */
import { activeAccount } from '../../accounts';
import { appendAudit } from '../../audit';
import type { SESSION_CONTRACT } from '../../messaging/session';
import { disconnected } from '../../errors/rpc';
import { runPanic, type PanicReport, type PanicStep } from '../panic';
import { auditOf, type ContractHandlers, type ProcedureDeps } from './deps';

/**
 * The panic audit entry's summary: each account's venues in plain words, the active account first; written before the
 * lock, it says the lock comes next.
 */
function panicSummary(r: PanicReport): string {
  const line = (s: PanicStep) => ('skipped' in s ? `skipped (${s.skipped})` : s.ok ? s.detail : s.error);
  const steps = (a: Pick<PanicReport, 'perps' | 'clob' | 'positions'>) =>
    `perps ${line(a.perps)}; order book ${line(a.clob)}; positions ${line(a.positions)}`;
  const accounts = r.accounts.map((a, i) =>
    i === 0 ? `${steps(a)} (account ${a.account.toLowerCase()})` : `account ${a.account.toLowerCase()}: ${steps(a)}`,
  );
  return (
    `Panic switch: ${accounts.length ? accounts.join('; ') : steps(r)}; ` +
    `${r.grants} permission(s) revoked, ${r.pending} request(s) ` +
    `rejected${r.problems.length ? `; problems: ${r.problems.join(' ')}` : ''}; locking Countersign`
  );
}

/**
 * `session.activity` (re-arms auto-lock: the router's activity flag does it) and `panic.run` (lib/background/panic.ts).
 */
export function sessionProcedures(d: ProcedureDeps): ContractHandlers<typeof SESSION_CONTRACT> {
  const { vault, db, service } = d;
  return {
    'session.activity': async () => null,
    'panic.run': async ({ closePositions }) => {
      // Panic closes the signing gate before its first await (lib/background/panic.ts); everything else follows.
      let account: string | undefined;
      return runPanic({
        account: async () => (account = (await activeAccount(db, vault))?.address),
        vault,
        service,
        reads: d.reads,
        closePositions,
        revokeGrants: () => d.grants.revokeAll(),
        rejectPending: () => {
          const n = d.registry.size;
          d.registry.rejectAll(() =>
            disconnected('Countersign was locked by its panic switch; the request was cancelled.'),
          );
          return n;
        },
        ...(d.haltKillSwitches ? { haltKillSwitches: d.haltKillSwitches } : {}),
        killSwitches: d.deadman,
        audit: (report, stepsOk) =>
          appendAudit(auditOf(d), {
            at: Date.now(),
            origin: 'extension',
            account: account?.toLowerCase() ?? '',
            kind: 'panic',
            summary: panicSummary(report),
            result: stepsOk ? 'ok' : 'error',
          }).then(() => undefined),
        auditLockFailed: (problem) =>
          appendAudit(auditOf(d), {
            at: Date.now(),
            origin: 'extension',
            account: account?.toLowerCase() ?? '',
            kind: 'panic.lock',
            summary: `Panic switch: Countersign could not be locked (${problem})`,
            result: 'error',
          }).then(() => undefined),
        lock: d.lock,
        ...(d.panicTiming ? { timing: d.panicTiming } : {}),
      });
    },
  };
}
