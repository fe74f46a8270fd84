/**
 * Contract of the notification preferences (`lib/notifications/prefs.ts`):
 * the popup reads and changes which browser notifications the background raises. Popup only; not secret.
 */
import * as v from 'valibot';
import { notificationPrefsSchema } from '../notifications/prefs';
import { noInput, POPUP, procedure } from './procedure';

/**
 * Notification procedures: `notifications.get` (the stored preferences, defaults for missing fields) and
 * `notifications.set` (a validated patch; the new preferences).
 */
export const NOTIFICATIONS_CONTRACT = {
  'notifications.get': procedure({ input: noInput, output: notificationPrefsSchema, senders: POPUP, activity: false }),
  'notifications.set': procedure({
    input: v.partial(notificationPrefsSchema),
    output: notificationPrefsSchema,
    senders: POPUP,
    activity: true,
  }),
} as const;
