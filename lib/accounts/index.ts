/**
 * The active account: the owner key the popup trades with and that sites connect to.
 *
 * It is a person's choice, stored in the vault database (`settings` store, key `activeAccount`, not
 * secret). The first owner key ever added becomes active; adding or generating another key never
 * changes it; only `selectAccount` (the popup's account switch) does. When the stored account no
 * longer exists (a backup restored without it), the oldest key becomes active and is persisted.
 */
import type { Address } from 'viem';
import { BaseError } from '../errors/base';
import type { VaultDb } from '../vault/db';
import type { OwnerInfo, Vault } from '../vault/vault';

/** Key of the active account's address in the vault database's `settings` store. */
const ACTIVE_ACCOUNT_KEY = 'activeAccount';

/** Thrown when the person picks an address that is not one of the vault's owner keys. */
export class UnknownAccountError extends BaseError {
  override name = 'Accounts.UnknownAccountError';
  /** EIP-1193 4100 "unauthorized": not an account of this vault. */
  static override readonly code: number | undefined = 4100;
  constructor() {
    super('That account is not in this vault.');
  }
}

/**
 * The stored active address of each database as last read or written through this module (* page path: every page
 * request asks for the active account). This module is the record's only writer; `version` moves with each write, so a
 * read that a write overtook is not kept.
 */
const held = new WeakMap<VaultDb, { version: number; address?: unknown }>();

/** The stored active address (`settings` › `activeAccount`), from memory when held. */
async function storedActive(db: VaultDb): Promise<unknown> {
  const h = held.get(db) ?? { version: 0 };
  if ('address' in h) return h.address;
  const version = h.version;
  const stored = await db.get('settings', ACTIVE_ACCOUNT_KEY);
  const now = held.get(db) ?? { version: 0 };
  if (now.version === version && !('address' in now)) held.set(db, { version, address: stored });
  return stored;
}

/** Stores `address` as the active one (and holds it once written). */
async function storeActive(db: VaultDb, address: string): Promise<void> {
  const version = (held.get(db)?.version ?? 0) + 1;
  held.set(db, { version }); // reads from here on wait for the store
  await db.put('settings', address, ACTIVE_ACCOUNT_KEY);
  if (held.get(db)?.version === version) held.set(db, { version, address });
}

/** The active owner key (address, label), or `undefined` when the vault holds none. Works while locked. */
export async function activeAccount(db: VaultDb, vault: Vault): Promise<OwnerInfo | undefined> {
  const [owners, stored] = await Promise.all([vault.listOwners(), storedActive(db)]); // independent reads, side by side
  const found =
    typeof stored === 'string' ? owners.find((o) => o.address.toLowerCase() === stored.toLowerCase()) : undefined;
  if (found) return found;
  const oldest = [...owners].sort((a, b) => a.createdAt - b.createdAt)[0];
  if (oldest) await storeActive(db, oldest.address);
  return oldest;
}

/**
 * Makes `address` the active account. Returns the previous and the new one (`changed` false when it was
 * already active). Throws `UnknownAccountError`.
 */
export async function selectAccount(
  db: VaultDb,
  vault: Vault,
  address: string,
): Promise<{ previous: Address | undefined; active: OwnerInfo; changed: boolean }> {
  const owner = (await vault.listOwners()).find((o) => o.address.toLowerCase() === address.toLowerCase());
  if (!owner) throw new UnknownAccountError();
  const previous = (await activeAccount(db, vault))?.address;
  await storeActive(db, owner.address);
  return { previous, active: owner, changed: previous?.toLowerCase() !== owner.address.toLowerCase() };
}

/** Thrown when the popup asks to trade for an account that is not the active one (a stale popup; EIP-1193 4100). */
export class NotActiveAccountError extends BaseError {
  override name = 'Accounts.NotActiveAccountError';
  static override readonly code = 4100;
  constructor() {
    super('That account is not the active one. Switch accounts first.');
  }
}

/**
 * Popup trading acts for the active account only (a popup left open on another account cannot):
 * resolves when `account` (any case) is the active one, throws `NotActiveAccountError` otherwise.
 */
export async function requireActiveAccount(db: VaultDb, vault: Vault, account: string): Promise<void> {
  const active = await activeAccount(db, vault);
  if (!active || active.address.toLowerCase() !== account.toLowerCase()) throw new NotActiveAccountError();
}
