/**
 * The popup's early reads (popup open): the boot script (`entrypoints/popup-boot.ts`, an
 * `async` classic script that runs while the popup's modules are fetched and evaluated) begins the start
 * hint's `storage.session` read and, once read, the ticket's first `streams.watch`; the popup takes both
 * (once) through its message caller (`entrypoints/popup/api.ts`) instead of asking again, and checks
 * them as if it had asked itself: the hint by its schema and epoch, the watch's reply by the
 * procedure's output schema, and the watch only when its own checked hint names the same account and
 * instrument.
 */
import { browser } from 'wxt/browser';
import { leave, takeLeft } from './boot-handoff';
import type { ProcedureCallInput } from './protocol';
import { firstWatchTarget, LAST_INSTRUMENT, START_HINT_KEY, VAULT_EPOCH_KEY, type EarlyWatch } from './start-hint-keys';

/** The global under which the boot script leaves its read (a `Promise` of the two keys' stored values). */
const EARLY_READ = '__countersignStartHintRead';

/** The global under which the boot script leaves its first watch (a `Promise` of an `EarlyWatch` or undefined). */
const EARLY_WATCH = '__countersignFirstWatch';

/**
 * The port name the boot script opens to start a stopped background at once, before its
 * `storage.session` read resolves: opening a port is an event the browser starts the worker for. The
 * background disconnects every port but the page relay's (`lib/background/ports.ts`), so nothing is sent
 * on it and nothing is answered.
 */
export const WAKE_PORT = 'countersign.wake';

/** Starts the background now, if the browser stopped it (see `WAKE_PORT`); never throws. */
export function wakeBackground(): void {
  try {
    browser.runtime.connect({ name: WAKE_PORT });
  } catch {
    /* the first message starts it instead */
  }
}

/**
 * Reads the start hint's two keys from `storage.session` now (the raw stored values; rejects as `storage.session.get`
 * does).
 */
export function readHintKeys(): Promise<Record<string, unknown>> {
  return browser.storage.session.get([START_HINT_KEY, VAULT_EPOCH_KEY]);
}

/** Begins the read and leaves it for the popup (`takeEarlyRead`); returns it. */
export function beginEarlyRead(): Promise<Record<string, unknown>> {
  const read = readHintKeys();
  read.catch(() => undefined); // taken (and its failure handled) by the popup
  leave(EARLY_READ, read);
  return read;
}

let asked = false;

/**
 * The boot script's read, for the page's first hint read only; undefined when the boot script had not
 * run by then, and for every later read, which must ask `storage.session` again (a lock may have come
 * since). The boot script is `async`: it normally runs long before the popup's modules.
 */
export function takeEarlyRead(): Promise<Record<string, unknown>> | undefined {
  if (asked) return undefined;
  asked = true;
  const read = takeLeft(EARLY_READ);
  return read instanceof Promise ? read : undefined;
}

/**
 * Begins the ticket's first `streams.watch` as soon as `read` (the boot read) resolves, for its
 * `firstWatchTarget` and `last` (default: the instrument shown last, `LAST_INSTRUMENT`), and leaves it
 * for the popup (`takeEarlyWatch`; undefined when nothing was sent). Nothing is sent without a target.
 * Never throws, and what it leaves never rejects (the reply inside it may).
 */
export function beginEarlyWatch(
  read: Promise<Record<string, unknown>>,
  last = Number(localStorage.getItem(LAST_INSTRUMENT)),
): void {
  const watch = read
    .then((stored): EarlyWatch | undefined => {
      const target = firstWatchTarget(stored, last, Date.now());
      if (!target) return undefined;
      const payload: ProcedureCallInput<'streams.watch'> = { account: target.account, perpsIid: target.iid };
      const reply = browser.runtime
        .sendMessage({ type: 'streams.watch', payload })
        .then((r: unknown) => ({ reply: r, at: Date.now() }));
      reply.catch(() => undefined); // taken (and its failure handled) by the popup
      return { ...target, reply };
    })
    .catch(() => undefined);
  leave(EARLY_WATCH, watch);
}

/** The boot script's first watch, once (later calls, and a page without the boot script, get undefined). */
export function takeEarlyWatch(): Promise<EarlyWatch | undefined> | undefined {
  const watch = takeLeft(EARLY_WATCH);
  return watch instanceof Promise ? watch : undefined;
}
