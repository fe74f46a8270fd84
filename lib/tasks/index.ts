/**
 * Deferring work to a later task (page path): the page path's own steps — the signature, the
 * send, the answer posted back to the page — run first, and the bookkeeping they start (a grant use's
 * vault write, an audit entry, an owned-order record) runs after them, when the worker would otherwise
 * wait on the network; an answer's bookkeeping also lets the next request's journal record go first
 * (`afterSends`). Nothing here changes the order of the work deferred by one helper among itself.
 */

/**
 * Least time (ms) after an answer before its bookkeeping is written (`afterSends`): a page that orders back to back
 * sends its next request as it reads the answer, and that request's journal record (the durable write its send waits
 * for) is stored within this time on a loaded 2-core machine (`test/bench/README.md`). Chromium commits one
 * extension's IndexedDB transactions one after the other, so bookkeeping written within it queues that record behind
 * its own transactions.
 */
export const SEND_GRACE_MS = 8;

/** Longest (ms) `afterSends` waits past its grace for the send-path writes in flight to end. */
export const SEND_WAIT_MAX_MS = 100;

let pressing = 0;
const quietWaiters = new Set<() => void>();

/**
 * Marks `write` — a durable write a send waits for: a submission's journal record (`lib/audit/journal.ts`; a grant
 * use's own vault write, when there is no journal, is not marked) — as in flight until it settles, so `afterSends`
 * lets it go first. Returns `write` itself. One count per worker: every journal shares it.
 */
export function pressingWrite<T>(write: Promise<T>): Promise<T> {
  pressing++;
  const done = () => {
    if (--pressing === 0) for (const w of [...quietWaiters]) w();
  };
  write.then(done, done);
  return write;
}

/**
 * Resolves in a later task, at least `SEND_GRACE_MS` after `from` (`performance.now()` ms: when the bookkeeping was
 * asked, so work queued behind other work does not wait its grace again), once no `pressingWrite` is in flight — and at
 * the latest `SEND_GRACE_MS + SEND_WAIT_MAX_MS` after `from`, whatever is in flight (a burst of concurrent sends never
 * starves it). For the bookkeeping that follows an answer (the audit entry, the journal record's close): it is not on
 * any send's path, and the next request's journal record is.
 */
export async function afterSends(from: number = performance.now()): Promise<void> {
  const grace = from + SEND_GRACE_MS - performance.now();
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, grace)));
  const left = from + SEND_GRACE_MS + SEND_WAIT_MAX_MS - performance.now();
  if (pressing === 0 || left <= 0) return;
  await new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      quietWaiters.delete(done);
      resolve();
    };
    const timer = setTimeout(done, left);
    quietWaiters.add(done);
  });
}

type PostTask = (cb: () => void, o: { priority: 'background' | 'user-visible' | 'user-blocking' }) => Promise<void>;

/** Resolves in a later task, after every microtask the current task has queued (`setTimeout` 0). */
export function nextTask(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}

/**
 * Resolves in a later task of background priority where the platform schedules by priority
 * (`scheduler.postTask`, Chromium; the reply of a pending extension-storage or network call goes first),
 * else as `nextTask`. For work that must not hold a send that is waiting for such a reply; it still
 * runs as soon as the worker is idle.
 */
export function backgroundTask(): Promise<void> {
  const postTask = (globalThis as { scheduler?: { postTask?: PostTask } }).scheduler?.postTask;
  if (!postTask) return nextTask();
  return postTask.call((globalThis as { scheduler?: unknown }).scheduler, () => undefined, { priority: 'background' });
}
