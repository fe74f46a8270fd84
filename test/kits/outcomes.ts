/**
 * A keyed records' store in memory for the idempotency suites (`lib/page/outcomes.ts` `OutcomeStore`):
 * `data` is what is stored (key → record); the same store handed to a second `Submissions` is a restart.
 */
import type { OutcomeStore, StoredOutcome } from '../../lib/page/outcomes';

/** An `OutcomeStore` in memory (see the module docstring). */
export function memoryOutcomeStore(): OutcomeStore & { readonly data: Map<string, StoredOutcome> } {
  const data = new Map<string, StoredOutcome>();
  return {
    data,
    load: async (since) =>
      Object.fromEntries([...data].filter(([, o]) => o.at >= since).map(([k, o]) => [k, structuredClone(o)])),
    put: async (records) => {
      for (const [k, o] of Object.entries(records)) data.set(k, structuredClone(o));
    },
    remove: async (keys) => {
      for (const k of keys) data.delete(k);
    },
    prune: async (before) => {
      for (const [k, o] of data) if (o.at < before) data.delete(k);
    },
  };
}
