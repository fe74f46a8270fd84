/**
 * Deferring work to a later task (page path): the page path's own steps — the signature, the
 * send, the answer posted back to the page — run first, and the bookkeeping they start (a grant use's
 * vault write, an audit entry, an owned-order record) runs after them, when the worker would otherwise
 * wait on the network. Nothing here changes the order of the deferred work among itself.
 */

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
