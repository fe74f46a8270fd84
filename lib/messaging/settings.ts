/** Contract of the settings procedures (issue #4 §1, settings store with versions and migrations). */
import * as v from 'valibot';
import { settingsSchema } from '../settings';
import { EXT, noInput, POPUP, procedure } from './procedure';

/** Settings procedures. `settings.get` also names the stored fields that were invalid (and replaced by defaults). */
export const SETTINGS_CONTRACT = {
  'settings.get': procedure({
    input: noInput,
    output: v.object({ settings: settingsSchema, invalid: v.array(v.object({ field: v.keyof(settingsSchema), reason: v.string() })) }),
    senders: EXT,
    activity: false,
  }),
  'settings.set': procedure({ input: v.partial(settingsSchema), output: settingsSchema, senders: POPUP, activity: true }),
} as const;
