/**
 * The start hint's storage keys and the early read (issue #19, popup open), apart from the hint's
 * schema so that the popup's boot script (`entrypoints/popup-boot.ts`, an `async` classic script that
 * runs while the popup's modules are fetched and evaluated) stays a few hundred bytes.
 */
import { browser } from 'wxt/browser';

/** `storage.session` key of the popup's start hint (`StartHint`, `./start-hint.ts`). */
export const START_HINT_KEY = 'popup.startHint';

/** `storage.session` key of the vault's session epoch: a random string the background renews on every session change. */
export const VAULT_EPOCH_KEY = 'vault.epoch';

/** The global under which the boot script leaves its read (a `Promise` of the two keys' stored values). */
const EARLY_READ = '__countersignStartHintRead';

/** Reads the start hint's two keys from `storage.session` now (the raw stored values; rejects as `storage.session.get` does). */
export function readHintKeys(): Promise<Record<string, unknown>> {
  return browser.storage.session.get([START_HINT_KEY, VAULT_EPOCH_KEY]);
}

/** Begins the read and leaves it for the popup (`takeEarlyRead`); the boot script's only work. */
export function beginEarlyRead(): void {
  const read = readHintKeys();
  read.catch(() => undefined); // taken (and its failure handled) by the popup
  Reflect.set(globalThis, EARLY_READ, read);
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
  const read: unknown = Reflect.get(globalThis, EARLY_READ);
  Reflect.deleteProperty(globalThis, EARLY_READ);
  return read instanceof Promise ? read : undefined;
}
