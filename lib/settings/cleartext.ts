/**
 * The record of services the stored settings ever named over a transport the rule refuses
 * (`transport.ts`): an older profile, a restored backup or a database written outside Countersign may
 * hold one. Countersign refuses to use such a URL; what may already have travelled in clear before is
 * told to the person (Settings), with the rotation that makes it worthless: a new proxy key, new
 * order-book API credentials. The record lives in the vault database's `settings` store (key
 * `cleartext-uses`, not secret: field names, URLs and times) and outlives the worker and the browser; it
 * is cleared only by the person (`settings.clearCleartext`, after rotating).
 */
import * as v from 'valibot';
import type { VaultDb } from '../vault/db';
import type { Settings } from './index';
import { insecureFields, TRANSPORT_FIELDS, type TransportField, type TransportRule } from './transport';

/** The `settings` store key of the record. */
const KEY = 'cleartext-uses';

/** One service the stored settings named in clear: its field, the URL, when first seen (Unix ms). */
export type CleartextUse = { field: TransportField; url: string; since: number };

/** What the record holds; at most one entry per field and URL, at most `MAX_USES` (oldest dropped). */
const usesSchema = v.array(
  v.object({
    field: v.picklist(Object.keys(TRANSPORT_FIELDS) as TransportField[]),
    url: v.pipe(v.string(), v.maxLength(300)),
    since: v.number(),
  }),
);
const MAX_USES = 50;

/**
 * What may have travelled in clear to each service, in words, and the rotation that makes it worthless
 * (`undefined`: nothing secret goes there — only what it answered may have been altered).
 */
export const CLEARTEXT_EXPOSURE: Readonly<
  Record<TransportField, { secrets: string; rotate?: 'proxy' | 'clob' } | undefined>
> = {
  perpsUrl: {
    secrets: "your perps proxy keys' secrets (sent with every account request) and the perps commands they signed",
    rotate: 'proxy',
  },
  perpsWsUrl: { secrets: "your perps proxy keys' secrets (the session stream's log-in)", rotate: 'proxy' },
  clobUrl: {
    secrets: 'your order-book API key, secret and passphrase, and the ClobAuth signatures that create them',
    rotate: 'clob',
  },
  clobWsUrl: { secrets: 'your order-book API key, secret and passphrase (the user channel’s log-in)', rotate: 'clob' },
  // The builder API key has no rotation in Countersign yet: the words say what to ask the venue.
  relayerUrl: {
    secrets:
      'your builder API credentials (ask the venue to revoke that key) and ' +
      'the deposit-wallet batches your owner key signed (each is good once)',
  },
  bridgeUrl: undefined,
  gammaUrl: undefined,
  dataUrl: undefined,
  rpcUrl: undefined,
};

/** The record (empty when none, or when what is stored is not a record). */
export async function readCleartextUses(db: VaultDb): Promise<CleartextUse[]> {
  const stored: unknown = await db.get('settings', KEY);
  const parsed = v.safeParse(usesSchema, stored);
  return parsed.success ? parsed.output : [];
}

/**
 * Adds to the record each service field of `s` that breaks `rule` (a field and URL already recorded
 * keeps its first time) and returns the whole record. Writes only when something is new.
 */
export async function noteCleartextUses(
  db: VaultDb,
  s: Pick<Settings, TransportField>,
  rule: TransportRule,
  now: number,
): Promise<CleartextUse[]> {
  const uses = await readCleartextUses(db);
  const fresh = insecureFields(s, rule).filter((f) => !uses.some((u) => u.field === f.field && u.url === f.url));
  if (fresh.length === 0) return uses;
  const next = [...uses, ...fresh.map((f) => ({ field: f.field, url: f.url, since: now }))].slice(-MAX_USES);
  await db.put('settings', next, KEY);
  return next;
}

/** Empties the record (the person rotated what it names, or read it and chose to keep it). */
export async function clearCleartextUses(db: VaultDb): Promise<void> {
  await db.delete('settings', KEY);
}
