import 'fake-indexeddb/auto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { KdfParams } from './crypto';
import { openVaultDb } from './db';
import { memorySessionStore, Vault } from './vault';

const FAST: KdfParams = { name: 'scrypt', N: 2 ** 10, r: 8, p: 1, dkLen: 32 };
const BOUNDS = { minN: 2 ** 10, maxN: 2 ** 20, maxR: 16, maxP: 4 };
let n = 0;

/** An unlocked vault, and a new worker's vault on the same database and session store. */
async function unlockedThenRestarted() {
  const db = await openVaultDb(`restore-writes-${n++}`);
  const session = memorySessionStore();
  const make = () => new Vault({ db, session, now: () => 1_800_000_000_000, kdf: FAST, bounds: BOUNDS });
  await make().create('correct horse battery');
  return { db, restarted: make() };
}

/** Records the mode of every IndexedDB transaction opened from now on. */
function transactionModes(): string[] {
  const modes: string[] = [];
  const open = IDBDatabase.prototype.transaction;
  vi.spyOn(IDBDatabase.prototype, 'transaction').mockImplementation(function (
    this: IDBDatabase,
    ...args: Parameters<IDBDatabase['transaction']>
  ) {
    modes.push(args[1] ?? 'readonly');
    return open.apply(this, args);
  });
  return modes;
}

describe('restoring the vault in a worker the browser restarted', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('restores the unlocked state without writing to the vault database', async () => {
    const { restarted } = await unlockedThenRestarted();
    const modes = transactionModes();
    expect(await restarted.restoreSession()).toBe(true);
    expect(restarted.state).toBe('unlocked');
    expect(modes.length).toBeGreaterThan(0);
    expect(modes).not.toContain('readwrite');
  });

  it('still deletes a session bundle an interrupted transition left beside the unlocked state', async () => {
    const { db, restarted } = await unlockedThenRestarted();
    await db.put('meta', { id: 'session', sealed: { iv: new Uint8Array(12), ct: new Uint8Array(32) } });
    expect(await restarted.restoreSession()).toBe(true);
    expect(restarted.state).toBe('unlocked');
    expect(await db.get('meta', 'session')).toBeUndefined();
  });
});
