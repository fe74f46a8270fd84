/**
 * Shared set-up of the suites that drive a `SigningService` directly against the in-process sandbox,
 * without a background (`lib/signer/*.test.ts`, `lib/settings/*.test.ts`; test-only, nothing in the
 * extension imports it). The caller imports `fake-indexeddb/auto` first.
 */
import { openVaultDb, type VaultDb } from '../../lib/vault/db';
import { memorySessionStore, Vault } from '../../lib/vault/vault';
import type { Harness } from './sandbox';
import { BOUNDS, KDF } from './background';

/**
 * A vault for the sandbox's demo account: opens the database `dbName`, creates an unlocked vault on it
 * (in-memory session store, the sandbox's clock `h.clock.now` in ms, the kit's cheap KDF and its bounds,
 * password "integration password"), imports the demo owner key (label "demo") and the demo proxy key with
 * its secret and expiry. Resolves the database, the vault and the owner's address (checksummed, as the
 * vault stores it).
 */
export async function demoVault(h: Harness, dbName: string): Promise<{ db: VaultDb; vault: Vault; owner: string }> {
  const db = await openVaultDb(dbName);
  const vault = new Vault({ db, session: memorySessionStore(), now: () => h.clock.now, kdf: KDF, bounds: BOUNDS });
  await vault.create('integration password');
  const owner = (await vault.importOwnerKey(h.demo.owner.privateKey, 'demo')).address;
  const p = h.demo.proxy;
  await vault.putProxy({
    account: owner,
    privateKey: p.privateKey,
    proxy: p.address,
    secret: p.secret,
    expiry: p.expiry,
  });
  return { db, vault, owner };
}
