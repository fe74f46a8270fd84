/**
 * The vault's second copy in memory (test-only; `lib/vault/copy.ts` keeps it in the origin private file
 * system): `value` what is stored, `failNext` makes the next write throw the browser's quota error,
 * `reads` counts reads.
 */
import type { VaultCopy, VaultCopyStore } from '../../lib/vault/copy';

/** A copy store in memory (see the module docstring). */
export function memoryCopy(): VaultCopyStore & { value: VaultCopy | undefined; failNext: boolean; reads: number } {
  const store = {
    value: undefined as VaultCopy | undefined,
    failNext: false,
    reads: 0,
    get: async () => {
      store.reads++;
      return store.value;
    },
    set: async (c: VaultCopy) => {
      if (store.failNext) {
        store.failNext = false;
        throw new DOMException('quota', 'QuotaExceededError');
      }
      store.value = structuredClone(c);
    },
  };
  return store;
}
