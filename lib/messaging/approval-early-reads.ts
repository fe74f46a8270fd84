/**
 * The approval window's early reads (window open): the boot script (`entrypoints/approval-boot.ts`, an
 * `async` classic script that runs while the window's modules are fetched and evaluated) sends the
 * window's two first questions at once — `vault.status` (the unlock form or the queue) and
 * `approval.list` (the request to show) — instead of one after the other once the modules have run. The
 * window's caller (`earlyAnswers`) takes each reply once, for the first call of that procedure, and checks
 * it exactly as a reply it asked for itself (`createCaller`: the reply envelope and the procedure's output
 * schema). Every later call asks the background again: the queue the window shows after its first paint
 * is re-read every second as before, and a decision carries the id and digest shown.
 */
import { browser } from 'wxt/browser';
import { leave, takeLeft } from './boot-handoff';
import type { ProcedureName } from './protocol';

/** The global under which the boot script leaves its replies (procedure name → the `sendMessage` promise). */
const EARLY_ANSWERS = '__countersignApprovalAnswers';

/** The procedures the boot script asks, each with an empty payload. */
export const APPROVAL_EARLY_READS = ['vault.status', 'approval.list'] as const satisfies readonly ProcedureName[];

/** Sends `APPROVAL_EARLY_READS` now and leaves their replies for the window (`earlyAnswers`). Never throws. */
export function beginApprovalReads(
  send: (message: unknown) => Promise<unknown> = (m) => browser.runtime.sendMessage(m),
): void {
  const answers = new Map<string, Promise<unknown>>();
  for (const type of APPROVAL_EARLY_READS) {
    try {
      const reply = send({ type, payload: {} });
      reply.catch(() => undefined); // taken (and its failure handled) by the window's caller
      answers.set(type, reply);
    } catch {
      /* the window asks itself */
    }
  }
  leave(EARLY_ANSWERS, answers);
}

/**
 * Wraps the window's `send`: the first message of each early-read procedure with an empty payload gets
 * the boot script's reply (raw, parsed by the caller as any reply); everything else — and everything when
 * the boot script did not run — is sent.
 */
export function earlyAnswers(send: (message: unknown) => Promise<unknown>): (message: unknown) => Promise<unknown> {
  const left = takeLeft(EARLY_ANSWERS);
  const answers = left instanceof Map ? (left as Map<string, Promise<unknown>>) : new Map<string, Promise<unknown>>();
  return (message) => {
    const m = message as { type?: unknown; payload?: unknown };
    const empty = !!m.payload && typeof m.payload === 'object' && Object.keys(m.payload).length === 0;
    const early = typeof m.type === 'string' && empty ? answers.get(m.type) : undefined;
    if (!early) return send(message);
    answers.delete(m.type as string);
    return early;
  };
}
