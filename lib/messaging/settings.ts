/** Contract of the settings procedures (settings store with versions and migrations). */
import * as v from 'valibot';
import { settingsSchema } from '../settings';
import { CHECKED_SERVICES } from '../settings/check';
import { TRANSPORT_FIELDS, type TransportField } from '../settings/transport';
import { done, EXT, noInput, POPUP, procedure } from './procedure';

const TRANSPORT_FIELD_NAMES = Object.keys(TRANSPORT_FIELDS) as TransportField[];

/**
 * Settings procedures (read, change, check each service's connection). `settings.get` also names the stored fields that
 * were invalid (and replaced by defaults).
 */
export const SETTINGS_CONTRACT = {
  /**
   * The settings; `invalid`: stored fields that failed validation (replaced by defaults); `insecure`: stored
   * service URLs the transport rule refuses at use (`lib/settings/transport.ts`); `cleartext`: services the stored
   * settings ever named in clear, each with what may have travelled (`secrets`, words; empty when nothing secret goes
   * there) and the rotation that makes it worthless (`rotate`).
   */
  'settings.get': procedure({
    input: noInput,
    output: v.object({
      settings: settingsSchema,
      invalid: v.array(v.object({ field: v.keyof(settingsSchema), reason: v.string() })),
      insecure: v.array(v.object({ field: v.picklist(TRANSPORT_FIELD_NAMES), url: v.string(), reason: v.string() })),
      cleartext: v.array(
        v.object({
          field: v.picklist(TRANSPORT_FIELD_NAMES),
          url: v.string(),
          since: v.number(),
          secrets: v.string(),
          rotate: v.optional(v.picklist(['proxy', 'clob'])),
        }),
      ),
    }),
    senders: EXT,
    activity: false,
  }),
  /**
   * Stores a patch of the settings the person may set (`venueChosen` is the background's: set when a patch
   * names a preset or a venue's service). Refuses, storing nothing: a field out of its schema
   * (`InvalidFieldError`), a service URL in clear (`Http.InsecureTransportError`), a venue whose hosts
   * the browser has not granted (`Settings.HostsNotGrantedError`).
   */
  'settings.set': procedure({
    input: v.partial(v.omit(settingsSchema, ['venueChosen'])),
    output: settingsSchema,
    senders: POPUP,
    activity: true,
  }),
  /** Empties the record of services named in clear (`settings.get`'s `cleartext`): the person rotated what it names. */
  'settings.clearCleartext': procedure({ input: noInput, output: done, senders: POPUP, activity: true }),
  /**
   * Checks the stored settings' services (`lib/settings/check.ts`): per service ok, or the
   * reason it failed, and the time it took (ms). Popup only; nothing is signed, no credential is sent.
   */
  'settings.checkConnections': procedure({
    input: noInput,
    output: v.object({
      results: v.array(
        v.object({
          service: v.picklist(CHECKED_SERVICES),
          label: v.string(),
          url: v.string(),
          ok: v.boolean(),
          reason: v.optional(v.string()),
          ms: v.number(),
        }),
      ),
    }),
    senders: POPUP,
    activity: true,
  }),
} as const;
