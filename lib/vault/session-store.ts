/**
 * The session store: what of the live state survives a worker restart (`storage.session` in the
 * extension, memory in tests). Who writes and restores it: `./session.ts`.
 */

/**
 * What survives a worker restart (`storage.session`), base64 strings: the master key while 'unlocked'
 * (`mk`) or the trading session's key while in 'session' (`sk`), with the vault's salt at that time (a
 * restored, re-created or re-keyed vault no longer matches, and the state is not restored). A trading
 * session also names the digest of its sealed bundle (`bundle`, sha256 of iv ‖ ct, updated on every
 * re-seal): a store writer must not be able to put an older copy back (a grant revoked during the
 * session, or its usage before the daily cap was reached).
 */
export type SessionState = { mk: string; salt: string } | { sk: string; salt: string; bundle: string };

/** The session store (in the extension: `browser.storage.session`, access level trusted contexts only). */
export type SessionStore = {
  get: () => Promise<SessionState | undefined>;
  set: (s: SessionState) => Promise<void>;
  clear: () => Promise<void>;
};

/** A session store in memory (tests, and Firefox builds without `storage.session`). */
export function memorySessionStore(): SessionStore {
  let s: SessionState | undefined;
  return { get: async () => s, set: async (v) => void (s = v), clear: async () => void (s = undefined) };
}
