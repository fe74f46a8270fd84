/**
 * An audit journal store in memory for the journal suites (`lib/audit/journal.ts` `JournalStore`): `data`
 * is what is stored (id → record, as written), `refuse` counts down writes to refuse (a full disk), and the
 * same store handed to a second `durableAuditJournal` is a restart (of the worker or of the browser: the journal's
 * store outlives both).
 */
import type { JournalRecord, JournalStore } from '../../lib/audit/journal';

/** An in-memory `JournalStore` (see the module docstring). */
export function journalStore(): JournalStore & { data: Record<string, JournalRecord>; refuse: number } {
  const s = {
    data: {} as Record<string, JournalRecord>,
    refuse: 0,
    load: async () => structuredClone(s.data) as Record<string, unknown>,
    put: async (id: string, record: JournalRecord) => {
      if (s.refuse > 0) {
        s.refuse--;
        throw new Error('quota');
      }
      s.data[id] = structuredClone(record);
    },
    delete: async (id: string) => {
      if (s.refuse > 0) {
        s.refuse--;
        throw new Error('quota');
      }
      delete s.data[id];
    },
  };
  return s;
}
