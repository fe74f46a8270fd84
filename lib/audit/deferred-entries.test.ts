/**
 * An answered submission's entry is written after `SEND_GRACE_MS` and once no journal record a send waits for is in
 * flight (`appendAudit` with `afterSends`, `lib/tasks`): the grace counts from the answer, not from the entry's turn,
 * and an entry someone waits for — the person's own, a refusal the page is answered with, a read of the log — is
 * never held behind a site's burst of them.
 */
import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import { openVaultDb } from '../vault/db';
import { appendAudit, auditLog, auditWritten, pageAudit } from '.';
import { durableAuditJournal } from './journal';
import { journalStore } from '../../test/kits/journal';
import { SEND_GRACE_MS, SEND_WAIT_MAX_MS } from '../tasks';

const base = { at: 1, origin: 'https://site.example', account: '0xabc', kind: 'clob.postOrders', summary: 's' };
let n = 0;

/** A log, and a journal whose next record's write waits for `release()` (a slow disk under a send). */
async function slowRecord() {
  const log = auditLog(await openVaultDb(`deferred-entries-${n++}`), async () => undefined);
  const store = journalStore();
  let release!: () => void;
  const put = store.put;
  store.put = (id, r) => new Promise<void>((res) => (release = res)).then(() => put(id, r));
  void durableAuditJournal(store)
    .open({ ...base, summary: 'the next order' })
    .stored.catch(() => undefined);
  return { log, release: () => release() };
}

describe("a site's burst of answered orders", () => {
  it('does not hold the entries and reads someone waits for behind it', async () => {
    const { log, release } = await slowRecord();
    const t0 = performance.now();
    const burst = Array.from({ length: 10 }, (_, i) =>
      appendAudit(log, { ...base, summary: `order ${i}`, result: 'ok' }, { afterSends: true }),
    );
    const own = appendAudit(log, {
      ...base,
      origin: 'extension',
      kind: 'grant.revoke',
      summary: 'revoked',
      result: 'ok',
    });
    const read = auditWritten(log).then(() => performance.now() - t0);
    await own;
    const ownAt = performance.now() - t0;
    const readAt = await read;
    release();
    await Promise.all(burst);
    expect((await pageAudit(log)).entries).toHaveLength(11);
    expect(ownAt, "the person's entry is written without waiting out the burst's grace").toBeLessThan(
      SEND_GRACE_MS * 5,
    );
    expect(readAt, 'a read of the log does not wait out the grace').toBeLessThan(SEND_WAIT_MAX_MS);
  });

  it('waits its grace and the longest wait once, not once per entry', async () => {
    const { log, release } = await slowRecord();
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        appendAudit(log, { ...base, summary: `order ${i}`, result: 'ok' }, { afterSends: true }),
      ),
    );
    const took = performance.now() - t0;
    release();
    expect(took, 'a record in flight throughout: one wait for the whole burst').toBeGreaterThanOrEqual(
      SEND_GRACE_MS + SEND_WAIT_MAX_MS - 2,
    );
    expect(took).toBeLessThan(3 * (SEND_GRACE_MS + SEND_WAIT_MAX_MS));
  });
});
