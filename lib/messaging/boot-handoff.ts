/**
 * The hand-off from a page's boot script (an `async` classic script that runs while the page's modules
 * load: `entrypoints/popup-boot.ts`, `entrypoints/approval-boot.ts`) to the page's modules: the boot script
 * leaves what it began (a pending read or reply) on the page's global object under a key, and the page takes it once.
 * Both run in the same extension page; nothing crosses a trust boundary.
 */

/** Leaves `value` under `key` for the page (`takeLeft`). */
export function leave(key: string, value: unknown): void {
  Reflect.set(globalThis, key, value);
}

/** What the boot script left under `key`, taken once (removed as it is read); undefined when nothing was left. */
export function takeLeft(key: string): unknown {
  const value: unknown = Reflect.get(globalThis, key);
  Reflect.deleteProperty(globalThis, key);
  return value;
}
