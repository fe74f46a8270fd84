/** Handlers of the vault procedures (contract: lib/messaging/vault.ts). */
import { activeAccount } from '../../accounts';
import { resealAfterRestore } from '../../audit';
import type { VAULT_CONTRACT } from '../../messaging/vault';
import type { Vault } from '../../vault/vault';
import { readSettings } from '../../settings';
import { assertVenueChosen } from '../../settings/confirmation';
import { auditOf, type ContractHandlers, type ProcedureDeps } from './deps';

/** Accounts view: owners with their proxies and CLOB credential info (non-secret). */
async function accounts(vault: Vault) {
  const owners = await vault.listOwners();
  const proxies = await vault.listProxies();
  return Promise.all(
    owners.map(async (o) => ({
      address: o.address,
      label: o.label,
      proxies: proxies
        .filter((p) => p.account.toLowerCase() === o.address.toLowerCase())
        .map(({ proxy, expiry, label }) => ({ proxy, expiry, label })),
      hasClobCredentials: await vault.hasClobCredentials(o.address),
      ...(await clobType(vault, o.address)),
    })),
  );
}

/** `{ clobSignatureType }` of `account`'s stored CLOB credentials, or nothing (none stored, or unreadable). */
async function clobType(vault: Vault, account: string): Promise<{ clobSignatureType?: 0 | 1 | 2 | 3 }> {
  const t = await vault.clobSignatureType(account).catch(() => undefined);
  return t === undefined ? {} : { clobSignatureType: t };
}

/**
 * Lock state, owner keys, password and backup. A successful unlock (or create / restore) lifts a panic's
 * signing gate. A new vault (create, or a restore on a new profile) needs a chosen venue first
 * (`Settings.VenueNotChosenError`).
 */
export function vaultProcedures(d: ProcedureDeps): ContractHandlers<typeof VAULT_CONTRACT> {
  const { vault, db, service } = d;
  return {
    'vault.status': async () => {
      // Independent reads, asked together (on a worker's first message each is a database read, the grants' one the
      // longest).
      const [status, list, active, session] = await Promise.all([
        vault.status(),
        accounts(vault),
        activeAccount(db, vault),
        // Live grants' sites and expiry: "Trading session: <site>, <time left>".
        vault.state === 'locked'
          ? []
          : d.grants.list().then((live) => live.map((g) => ({ origin: g.origin, expiresAt: g.expiresAt }))),
      ]);
      // A vault is created only once a venue was chosen (`vault.create`): only a new profile reads the settings for it.
      const venueChosen = status.initialized || (await readSettings(db)).venueChosen;
      return {
        ...status,
        accounts: list,
        activeAccount: active?.address ?? null,
        pendingApprovals: d.registry.size,
        session,
        venueChosen,
      };
    },
    'vault.create': async ({ password }) => {
      assertVenueChosen(await readSettings(db)); // a release's first run: the venue first, whatever page asks
      await vault.create(password);
      service.resume(); // a panic's signing gate lasts until the next successful unlock
      await d.onUnlocked({ fromSession: false });
      return null;
    },
    'vault.unlock': async ({ password }) => {
      const fromSession = vault.sessionLive;
      await vault.unlock(password);
      service.resume(); // a panic's signing gate lasts until the next successful unlock
      await d.onUnlocked({ fromSession });
      return null;
    },
    'vault.lock': async () => {
      await d.lock();
      return null;
    },
    'vault.changePassword': async ({ oldPassword, newPassword }) => {
      await vault.changePassword(oldPassword, newPassword);
      return null;
    },
    'vault.importOwnerKey': async ({ privateKey, label }) => {
      const o = await vault.importOwnerKey(privateKey, label ?? '');
      await activeAccount(db, vault); // the first key becomes active; later keys never change it
      return { address: o.address };
    },
    'vault.generateOwnerKey': async ({ label }) => {
      const o = await vault.generateOwnerKey(label ?? '');
      await activeAccount(db, vault);
      return { address: o.address };
    },
    'vault.revealOwnerKey': async ({ address, password }) => ({
      privateKey: await vault.revealOwnerKey(address, password),
    }),
    'vault.accounts': async () => accounts(vault),
    'vault.exportBackup': async () => ({ backup: await vault.exportBackup() }),
    'vault.restoreBackup': async ({ backup, password }) => {
      if (!(await vault.status()).initialized) assertVenueChosen(await readSettings(db)); // as `vault.create`
      await vault.restoreBackup(backup, password);
      service.resume(); // a panic's signing gate lasts until the next successful unlock
      await resealAfterRestore(auditOf(d)); // the log was sealed by the previous vault's key
      await d.onUnlocked({ fromSession: false });
      return null;
    },
  };
}
