/**
 * The relayer transactions Countersign submitted for a deposit wallet and has not yet seen land,
 * kept by the background so their progress outlives the popup: the popup that submitted one may
 * close, and the next one shows the transaction again until it is mined, failed or refused. Non-secret
 * (transaction ids, what each does, the owner address, when) in the vault database's `settings` store
 * under `relayerPending`, at most 20, each for a day at most. A landed transaction (MINED, CONFIRMED,
 * FAILED, INVALID) is reported once and then forgotten (`forgetRelayerTxs`); nothing is ever resubmitted.
 */
import * as v from 'valibot';
import type { VaultDb } from '../vault/db';

const KEY = 'relayerPending';
/** Most transactions remembered (the oldest fall off). */
const MAX_PENDING = 20;
/** A transaction is forgotten after this long even when it never landed (ms). */
const MAX_AGE_MS = 86_400_000;

const entrySchema = v.object({
  account: v.pipe(v.string(), v.regex(/^0x[0-9a-f]{40}$/)),
  transactionID: v.pipe(v.string(), v.minLength(1), v.maxLength(100)),
  label: v.pipe(v.string(), v.maxLength(200)),
  at: v.number(),
});
/**
 * One remembered relayer transaction: owner `account` (lower-case), the relayer's id, what it does in words, submitted
 * at (Unix ms).
 */
export type PendingRelayerTx = v.InferOutput<typeof entrySchema>;

/** Rewrites the list in one read-write transaction (so concurrent status reads and submissions never lose one). */
async function update(db: VaultDb, fn: (all: PendingRelayerTx[]) => PendingRelayerTx[]): Promise<void> {
  const tx = db.transaction('settings', 'readwrite');
  const read = v.safeParse(v.array(entrySchema), await tx.store.get(KEY));
  const all = read.success ? read.output : [];
  const next = fn(all);
  if (next.length !== all.length || next.some((e, i) => e !== all[i]))
    await tx.store.put(next.slice(-MAX_PENDING), KEY);
  await tx.done;
}

/** Remembers a submitted transaction of owner `account` (any case): `label` says what it does. */
export async function rememberRelayerTx(
  db: VaultDb,
  e: { account: string; transactionID: string; label: string; at: number },
): Promise<void> {
  const entry = v.parse(entrySchema, { ...e, account: e.account.toLowerCase(), label: e.label.slice(0, 200) });
  await update(db, (all) => [...all.filter((x) => x.transactionID !== entry.transactionID), entry]);
}

/** The remembered transactions of owner `account` younger than a day at `now` (Unix ms), oldest first. */
export async function pendingRelayerTxs(db: VaultDb, account: string, now: number): Promise<PendingRelayerTx[]> {
  const read = v.safeParse(v.array(entrySchema), await db.get('settings', KEY));
  return (read.success ? read.output : []).filter(
    (x) => x.account === account.toLowerCase() && now - x.at < MAX_AGE_MS,
  );
}

/** Forgets the transactions `ids` (they landed and were reported), and any older than a day at `now`. */
export async function forgetRelayerTxs(db: VaultDb, ids: readonly string[], now: number): Promise<void> {
  await update(db, (all) => all.filter((x) => !ids.includes(x.transactionID) && now - x.at < MAX_AGE_MS));
}
