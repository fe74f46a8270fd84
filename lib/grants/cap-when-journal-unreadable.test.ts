/**
 * A grant's 24 h cap holds across a worker stop when the journal cannot be read at start: a use a stopped
 * worker sent under, whose vault write never landed, lives only in its audit journal record, and the next
 * worker merges it before its first decision (`GrantLedger.merge` ← `AuditJournal.leftovers`); a failed
 * read covers nothing and is tried again at the next read, never taken for "no leftovers". A Vault, a
 * GrantService and the journal over fake-indexeddb and an in-memory journal store (`useWorkers`); a
 * restart is a second worker on the same stores.
 */
import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import { SITE, USE_ACCOUNT, USE_ORDER, useRef, useArmed, useWorkers, useOrder, uses24h } from '../../test/kits/grants';

describe("a grant's cap when the journal cannot be read at start", () => {
  it(
    'the stopped worker sent one order of 31 USDC under a 40 USDC cap (its use only in the ' +
      "journal); the next worker's journal read fails once: a second order of 31 is still refused",
    async () => {
      const s = await useWorkers('cap-when-journal-unreadable', '40');
      expect((await useOrder(s.first, 'never', { close: false })).ok).toBe(true); // sent; its vault write never ran
      const load = s.store.load;
      let failures = 1;
      s.store.load = async () => {
        if (failures-- > 0)
          throw new DOMException('The operation failed for reasons unrelated to the database itself', 'UnknownError');
        return load();
      };
      const next = await s.restart();
      const d = await next.grants.decide(SITE, USE_ACCOUNT, USE_ORDER, useRef, useArmed);
      expect(
        d?.ok,
        `a second 31 USDC order past the 40 USDC cap (usage read: ${await uses24h(next.grants)} use(s))`,
      ).toBe(false);
    },
  );
});
