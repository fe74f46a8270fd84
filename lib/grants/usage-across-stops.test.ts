/**
 * What a grant counted is what it stored: the grant's 24 h usage (`grant.list`: uses and notional, to the
 * unit) reads the same in the worker that signs a covered order and in the next worker after a stop at any
 * step of that order — decided, counted, its journal record stored (the order may leave from here on), the
 * use's vault write landed, its audit entry written. Before its record is stored nothing was sent and
 * nothing is counted by either worker; from then on both count it. A Vault, a GrantService and the audit
 * journal over fake-indexeddb and an in-memory journal store (`useWorkers`); a stop is a second worker on
 * the same stores while the first one's unfinished writes never run.
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

/** The steps of one covered order, in the order the signer takes them. */
const STEPS = ['decided', 'counted', 'journalled', 'written', 'audited'] as const;
type Step = (typeof STEPS)[number];

/** The grant's 24 h usage as `grant.list` reports it: `[uses, notional USDC]`. */
const usage = async (w: UseWorker) => {
  const [g] = await w.grants.list();
  return [g?.uses24h, g?.used24h] as const;
};

/**
 * Runs one covered order on `w` up to `stop` (inclusive): the use's vault write is held for ever unless
 * the order gets to `written` (a stopped worker's write never runs).
 */
async function coveredOrderUpTo(w: UseWorker, stop: Step): Promise<void> {
  const reached = (s: Step) => STEPS.indexOf(stop) >= STEPS.indexOf(s);
  const v = grantUseRecords(w.vault) as unknown as Sealer;
  if (!reached('written')) v.sealBucket = () => new Promise(() => undefined);
  const d = await w.grants.decide(SITE, USE_ACCOUNT, USE_ORDER, useRef, useArmed);
  expect(d?.ok).toBe(true);
  if (!d?.ok || !reached('counted')) return;
  await d.reservation.counted;
  if (!reached('journalled')) return;
  const rec = d.reservation.carry(w.journal, USE_RECORD);
  await d.reservation.durable; // sent from here on
  if (!reached('written')) return;
  await d.reservation.written;
  if (!reached('audited')) return;
  await w.journal.close(rec.id);
}

describe("a grant's 24 h usage across a worker stop inside a covered order", () => {
  for (const stop of STEPS) {
    it(
      `a stop after "${stop}": the next worker reads the same uses and notional ` +
        `as the signing worker, and both count the order once it may have left`,
      async () => {
        const s = await useWorkers('usage-across-stops', '1000');
        await useOrder(s.first, 'lands'); // one earlier order, complete
        await coveredOrderUpTo(s.first, stop);
        await new Promise((r) => setTimeout(r, 10));
        const before = await usage(s.first);
        const next = await s.restart();
        const after = await usage(next);
        expect(after, `usage after a stop at "${stop}"`).toEqual(before);
        const sent = STEPS.indexOf(stop) >= STEPS.indexOf('journalled');
        expect(after[0], sent ? 'the order may have left: counted' : 'nothing left: not counted').toBe(sent ? 2 : 1);
        // And a second stop changes nothing.
        expect(await usage(await s.restart())).toEqual(after);
      },
    );
  }
});
