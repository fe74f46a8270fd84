/**
 * A page read lets the appends queued while it waits go first (an append's write waits for every read
 * transaction open on the store), within a bound, so a read never holds up a signature's audit entry.
 */
import 'fake-indexeddb/auto';
import { afterEach, describe, expect, it } from 'vitest';
import { openVaultDb } from '../vault/db';
import { appendAudit, auditLog, pageAudit, type AuditInput } from './index';

const entry = (i: number): AuditInput => ({
  at: 1_000 + i,
  origin: 'https://a.example',
  account: '0xabc',
  kind: 'perps.createOrders',
  summary: `order ${i}`,
  result: 'ok',
});
const nativeTransaction = IDBDatabase.prototype.transaction;
afterEach(() => {
  IDBDatabase.prototype.transaction = nativeTransaction;
});

describe('a page read during appends', () => {
  it('opens its read transaction only after the appends queued one after another while it waited', async () => {
    const db = await openVaultDb('audit-reads-yield');
    const key = (await crypto.subtle.generateKey({ name: 'HMAC', hash: 'SHA-256' }, false, [
      'sign',
      'verify',
    ])) as CryptoKey;
    const log = auditLog(db, async () => key);
    for (let i = 0; i < 3; i++) await appendAudit(log, entry(i));
    let done = 0;
    const readOpenedAfter: number[] = [];
    IDBDatabase.prototype.transaction = function (this: IDBDatabase, ...args: Parameters<IDBDatabase['transaction']>) {
      const [names, mode] = args;
      if ((mode ?? 'readonly') === 'readonly' && [names].flat().join() === 'audit') readOpenedAfter.push(done);
      return nativeTransaction.apply(this, args);
    } as IDBDatabase['transaction'];
    // The signer's appends, each started as the previous one settles (a burst of granted orders).
    const burst = (async () => {
      for (let i = 0; i < 4; i++) {
        await appendAudit(log, entry(10 + i));
        done++;
      }
    })();
    const page = await pageAudit(log, { limit: 10 });
    await burst;
    expect(readOpenedAfter[0]).toBe(4);
    expect(page.entries.map((e) => e.summary).slice(0, 4)).toEqual(['order 13', 'order 12', 'order 11', 'order 10']);
  });
});
