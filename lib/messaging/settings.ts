/** Contract of the settings procedures (settings store with versions and migrations). */
import * as v from 'valibot';
import { settingsSchema } from '../settings';
import { CHECKED_SERVICES } from '../settings/check';
import { EXT, noInput, POPUP, procedure } from './procedure';

/** Settings procedures (read, change, check each service's connection). `settings.get` also names the stored fields that were invalid (and replaced by defaults). */
export const SETTINGS_CONTRACT = {
  'settings.get': procedure({
    input: noInput,
    output: v.object({ settings: settingsSchema, invalid: v.array(v.object({ field: v.keyof(settingsSchema), reason: v.string() })) }),
    senders: EXT,
    activity: false,
  }),
  'settings.set': procedure({ input: v.partial(settingsSchema), output: settingsSchema, senders: POPUP, activity: true }),
  /**
   * Checks the stored settings' services (`lib/settings/check.ts`): per service ok, or the
   * reason it failed, and the time it took (ms). Popup only; nothing is signed, no credential is sent.
   */
  'settings.checkConnections': procedure({
    input: noInput,
    output: v.object({
      results: v.array(v.object({ service: v.picklist(CHECKED_SERVICES), label: v.string(), url: v.string(), ok: v.boolean(), reason: v.optional(v.string()), ms: v.number() })),
    }),
    senders: POPUP,
    activity: true,
  }),
} as const;
