/**
 * A grant's 24 h usage as `grant.list` reports it equals what a restarted worker reads
 * (`lib/grants/ledger.ts` `durableUses`) after a covered order whose journal record (carrying the use) was
 * stored, then refused before the send (the signer's `discard`: the meter's site share spent, a halt or a
 * revoke right before the post): the record goes with its use, and while the use's vault write is still
 * running the use is not durable. A Vault, a GrantService and the audit journal over fake-indexeddb and an
 * in-memory journal store; a stop is a second worker on the same stores while the first one's unfinished
 * write never runs.
 */
import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import {
  SITE,
  USE_ACCOUNT,
  USE_ORDER,
  USE_RECORD,
  useRef,
  useArmed,
  useWorkers,
  useOrder,
  type Sealer,
  type UseWorker,
} from '../../test/kits/grants';
import { grantUseRecords } from './use-records';

const usage = async (w: UseWorker) => {
  const [g] = await w.grants.list();
  return [g?.uses24h, g?.used24h] as const;
};

describe("a grant's usage after a covered order refused before its send", () => {
  it(
    'journalled, then discarded (nothing sent) while its vault ' +
      'write is still held: grant.list reads what the next worker reads',
    async () => {
      const s = await useWorkers('usage-after-refused-send', '1000');
      await useOrder(s.first, 'lands'); // one earlier order, complete
      const v = grantUseRecords(s.first.vault) as unknown as Sealer;
      v.sealBucket = () => new Promise(() => undefined); // the use's vault write is queued, never lands before the stop
      const d = await s.first.grants.decide(SITE, USE_ACCOUNT, USE_ORDER, useRef, useArmed);
      expect(d?.ok).toBe(true);
      if (!d?.ok) return;
      await d.reservation.counted;
      const rec = d.reservation.carry(s.first.journal, USE_RECORD);
      await d.reservation.durable;
      await s.first.journal.discard(rec.id); // refused before the send (lib/signer/submit.ts)
      await new Promise((r) => setTimeout(r, 10));
      const shown = await usage(s.first);
      const next = await s.restart();
      expect(await usage(next), `grant.list showed ${JSON.stringify(shown)}`).toEqual(shown);
    },
  );
});
