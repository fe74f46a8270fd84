/**
 * The vault's second copy: an independent, encrypted copy of everything that opens the keys — the
 * vault metadata (KDF, salt, wrapped master key, verifier) and every sealed key record (owner keys, proxy
 * keys, order-book credentials, deposit wallets; not the grants, which end with the browser) — with the
 * settings, kept in another storage area than the vault's IndexedDB (a file of the extension's origin
 * private file system, `opfsCopyStore`: its own files on disk, so a browser that discards a damaged
 * IndexedDB keeps it, and out of content scripts' reach). Useless without the password, like a backup
 * file: it is one, in the backup format (`Vault.exportBackup`).
 *
 * Each write of key material bumps the vault's `generation` (a `meta` record), checks that what was
 * written reads back and opens with the master key, then writes the copy with the same generation;
 * "done" only after that. At start the copy is refreshed from a vault that is newer (a write whose copy
 * failed). A vault that is missing, or older than its copy (a lower generation: writes the disk lost),
 * is restored from the copy when the person unlocks with their password (`Vault.unlock`); a new vault is
 * never created over a copy (`VaultCopyExistsError`). Must outlive the worker, the browser and a full
 * disk (a failed copy write leaves the previous copy).
 */
import * as v from 'valibot';
import { BaseError } from '../errors/base';
import { errorName, VaultStorageClosedError, VaultWriteError } from './errors';
import type { SecretRecord, VaultDb, VaultMeta } from './db';
import type { Sealed } from './crypto';

const b64 = (b: Uint8Array) => btoa(String.fromCharCode(...b));

/**
 * Where the copy lives: one value (a file of the extension's origin private file system, `opfsCopyStore`; memory in
 * tests).
 */
export type VaultCopyStore = { get: () => Promise<unknown>; set: (copy: VaultCopy) => Promise<void> };

/**
 * The copy: format tag, version 1, the vault's generation it copies, when written (Unix ms), the backup (JSON text) and
 * the stored settings.
 */
export type VaultCopy = {
  format: 'countersign-vault-copy';
  version: 1;
  generation: number;
  writtenAt: number;
  backup: string;
  settings?: unknown;
};

const copySchema = v.object({
  format: v.literal('countersign-vault-copy'),
  version: v.literal(1),
  generation: v.pipe(v.number(), v.safeInteger(), v.minValue(0)),
  writtenAt: v.number(),
  backup: v.pipe(v.string(), v.maxLength(5_000_000)),
  settings: v.optional(v.unknown()),
});

/** Record kinds that end with the browser: never copied (a grant restored from a copy would come back to life). */
const EPHEMERAL: ReadonlySet<SecretRecord['kind']> = new Set(['grant', 'grantuse']);

/** The part of the origin private file system (`navigator.storage.getDirectory()`) a copy store uses. */
type OpfsDirectory = {
  getFileHandle: (
    name: string,
    o?: { create?: boolean },
  ) => Promise<{
    getFile: () => Promise<{ text: () => Promise<string> }>;
    createWritable: () => Promise<{ write: (data: string) => Promise<void>; close: () => Promise<void> }>;
  }>;
};

/**
 * The copy as file `name` of the extension's origin private file system: its own files on disk (not the
 * vault's IndexedDB), readable by the extension's own contexts only (never by a content script), and
 * replaced whole — `createWritable` writes a temporary file that `close` moves over the old one, so a
 * crash mid-write keeps the previous copy. Undefined where the browser has no such file system.
 */
export function opfsCopyStore(name: string): VaultCopyStore | undefined {
  const storage = (globalThis.navigator as { storage?: { getDirectory?: () => Promise<OpfsDirectory> } } | undefined)
    ?.storage;
  const getDirectory = storage?.getDirectory?.bind(storage);
  if (!getDirectory) return undefined;
  return {
    get: async () => {
      let text: string;
      try {
        text = await (await (await (await getDirectory()).getFileHandle(name)).getFile()).text();
      } catch (err) {
        if (err instanceof Error && err.name === 'NotFoundError') return undefined; // no copy yet
        throw err; // a copy that cannot be read is not "no copy": nothing may be created over it
      }
      try {
        return JSON.parse(text) as unknown;
      } catch {
        return text; // not JSON: damaged (`readVaultCopy` reads it as none, never trusted)
      }
    },
    set: async (copy) => {
      const file = await (await getDirectory()).getFileHandle(name, { create: true });
      const out = await file.createWritable();
      try {
        await out.write(JSON.stringify(copy));
        await out.close();
      } catch (err) {
        await (out as { abort?: () => Promise<void> }).abort?.().catch(() => undefined); // its temporary file goes
        throw err;
      }
    },
  };
}

/**
 * The copy in `store`, or undefined when there is none or it is not a copy (a damaged one is ignored, never trusted).
 */
export async function readVaultCopy(store: VaultCopyStore): Promise<VaultCopy | undefined> {
  const parsed = v.safeParse(copySchema, await store.get());
  return parsed.success ? (parsed.output as VaultCopy) : undefined;
}

/** The backup JSON text of `meta` and `secrets` (the format `Vault.restoreBackup` reads). */
export function backupJsonOf(meta: VaultMeta, secrets: readonly SecretRecord[]): string {
  const sealed = (s: Sealed) => ({ iv: b64(s.iv), ct: b64(s.ct) });
  return JSON.stringify({
    format: 'countersign-backup',
    version: 1,
    meta: {
      kdf: meta.kdf,
      salt: b64(meta.salt),
      wrapped: sealed(meta.wrapped),
      verifier: sealed(meta.verifier),
      createdAt: meta.createdAt,
    },
    secrets: secrets.map((r) => ({ ...r, sealed: sealed(r.sealed) })),
  });
}

/**
 * The copy of the vault in `db` at `generation` (undefined when `db` holds no vault): its key records and settings,
 * read in one transaction.
 */
export async function snapshotVault(db: VaultDb, generation: number, now: number): Promise<VaultCopy | undefined> {
  const tx = db.transaction(['meta', 'secrets', 'settings'], 'readonly');
  const [meta, secrets, settings] = await Promise.all([
    tx.objectStore('meta').get('vault'),
    tx.objectStore('secrets').getAll(),
    tx.objectStore('settings').get('prefs'),
    tx.done,
  ]);
  if (!meta || meta.id !== 'vault') return undefined;
  const kept = secrets.filter((r) => !EPHEMERAL.has(r.kind));
  return {
    format: 'countersign-vault-copy',
    version: 1,
    generation,
    writtenAt: now,
    backup: backupJsonOf(meta, kept),
    ...(settings === undefined ? {} : { settings }),
  };
}

/** Whether two copies hold the same vault (generation and when written aside). */
export const sameVault = (a: VaultCopy, b: VaultCopy): boolean =>
  a.backup === b.backup && JSON.stringify(a.settings) === JSON.stringify(b.settings);

/**
 * The storage failure a thrown value is, in words (`VaultStorageClosedError` for a database connection
 * the browser closed, `VaultWriteError` for a refused write), or undefined for anything else. The
 * background maps every procedure's error through it before the reply (`lib/background/compose.ts`).
 */
export function storageFailure(err: unknown): BaseError | undefined {
  if (err instanceof BaseError) return undefined;
  const name = errorName(err);
  const message = err instanceof Error ? err.message : '';
  if (name === 'InvalidStateError' && /clos/i.test(message)) return new VaultStorageClosedError(err);
  if (name === 'QuotaExceededError' || name === 'UnknownError') return new VaultWriteError(err);
  // A transaction the browser aborted (on a full disk Chromium may abort the commit itself): nothing of it was stored.
  if (name === 'AbortError' && typeof DOMException !== 'undefined' && err instanceof DOMException)
    return new VaultWriteError(err);
  return undefined;
}

/**
 * Runs a vault write, turning the browser's refusal of it (a `DOMException`, an aborted transaction) into
 * `VaultWriteError`; other errors pass unchanged.
 */
export async function vaultWrite<T>(write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (err) {
    if (err instanceof BaseError) throw err;
    const failure = storageFailure(err);
    if (failure) throw failure;
    if (
      (typeof DOMException !== 'undefined' && err instanceof DOMException) ||
      (err instanceof Error && /AbortError|InvalidStateError/.test(err.name))
    )
      throw new VaultWriteError(err);
    throw err;
  }
}
