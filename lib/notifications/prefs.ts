/**
 * The person's notification preferences: which kinds of browser
 * notification the background raises, the liquidation distance and the stream-down delay. Kept in the
 * vault database's `settings` store under their own key, `notifications` (beside the settings'
 * `prefs` record, which they never touch), as `{ version: 1, values }`. Not secret.
 *
 * Read field by field like the settings: a missing or invalid field takes its default (so a newer
 * build's extra field or an older build's missing one never stops notifications).
 */
import * as v from 'valibot';
import type { VaultDb } from '../vault/db';
import { parseOrThrow } from '../validation';

/** The `settings` store key of the notification preferences. */
export const NOTIFICATIONS_KEY = 'notifications';

/**
 * The preferences' schema. Booleans switch each kind on or off; `liquidationPct` is the distance
 * between the mark price and the liquidation price, in % of the mark (0.1-50), under which a position
 * notifies (once per crossing); `streamDownSeconds` how long a stream must be down while a grant is
 * live before it notifies (5-3600 s).
 */
export const notificationPrefsSchema = v.strictObject({
  fills: v.boolean('must be true or false'),
  cancels: v.boolean('must be true or false'),
  liquidation: v.boolean('must be true or false'),
  liquidationPct: v.pipe(
    v.number('must be a number'),
    v.minValue(0.1, 'must be at least 0.1 %'),
    v.maxValue(50, 'must be at most 50 %'),
  ),
  streamDown: v.boolean('must be true or false'),
  streamDownSeconds: v.pipe(
    v.number('must be a number'),
    v.safeInteger('must be whole seconds'),
    v.minValue(5, 'must be at least 5 s'),
    v.maxValue(3600, 'must be at most 3600 s'),
  ),
});

/** Notification preferences (see `notificationPrefsSchema` for units and bounds). */
export type NotificationPrefs = v.InferOutput<typeof notificationPrefsSchema>;

/** A fresh install: every kind on, 10 % from liquidation, 30 s of stream outage. */
export const DEFAULT_NOTIFICATION_PREFS: NotificationPrefs = {
  fills: true,
  cancels: true,
  liquidation: true,
  liquidationPct: 10,
  streamDown: true,
  streamDownSeconds: 30,
};

const storedSchema = v.object({ version: v.literal(1), values: v.record(v.string(), v.unknown()) });

const isPrefsField = (key: string): key is keyof NotificationPrefs =>
  Object.hasOwn(notificationPrefsSchema.entries, key);
const FIELDS = Object.keys(notificationPrefsSchema.entries).filter(isPrefsField);

/** Reads the preferences; a missing or invalid stored field takes its default. */
export async function readNotificationPrefs(db: VaultDb): Promise<NotificationPrefs> {
  const stored = v.safeParse(storedSchema, await db.get('settings', NOTIFICATIONS_KEY));
  const values = stored.success ? stored.output.values : {};
  const candidate: Record<string, unknown> = {};
  for (const field of FIELDS) {
    const parsed = v.safeParse(notificationPrefsSchema.entries[field], values[field]);
    candidate[field] = parsed.success ? parsed.output : DEFAULT_NOTIFICATION_PREFS[field];
  }
  return parseOrThrow(notificationPrefsSchema, candidate);
}

/**
 * Writes a validated patch over the stored preferences and returns them. Throws `InvalidFieldError` naming the field.
 */
export async function writeNotificationPrefs(
  db: VaultDb,
  patch: Partial<NotificationPrefs>,
): Promise<NotificationPrefs> {
  const next = parseOrThrow(notificationPrefsSchema, { ...(await readNotificationPrefs(db)), ...patch });
  await db.put('settings', { version: 1, values: next }, NOTIFICATIONS_KEY);
  return next;
}
