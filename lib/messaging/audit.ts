/**
 * Contract of the audit-log procedures: pages newest first (`before`: the last id
 * shown), checks incrementally (`full`: a background full check; call again to poll its progress),
 * exports a page at a time oldest first (`after`: the last id exported). Times Unix ms.
 */
import * as v from 'valibot';
import { nonNegativeSafeInteger } from '../validation';
import { noInput, POPUP, procedure } from './procedure';

/**
 * An entry as the popup sees it (`AuditEntryView` of lib/audit): `mac` the hex link when sealed, `status` its check.
 */
const auditEntrySchema = v.object({
  id: v.number(),
  at: v.number(),
  origin: v.string(),
  account: v.string(),
  kind: v.string(),
  summary: v.string(),
  digest: v.optional(v.string()),
  result: v.picklist(['ok', 'rejected', 'error', 'unknown']),
  detail: v.optional(v.string()),
  mac: v.optional(v.string()),
  status: v.picklist(['ok', 'locked', 'pending', 'unauthenticated', 'changed', 'unchecked']),
});

/** The result of a check (`AuditCheck` of lib/audit/verify: what each field means is documented there). */
const auditCheckSchema = v.object({
  ok: v.boolean(),
  state: v.picklist(['ok', 'broken', 'checking', 'locked']),
  count: v.number(),
  checked: v.number(),
  full: v.boolean(),
  brokenAt: v.optional(v.number()),
  reason: v.optional(v.string()),
  progress: v.optional(v.object({ done: v.number(), total: v.number(), full: v.boolean() })),
  unauthenticated: v.number(),
  pending: v.number(),
  since: v.optional(v.number()),
  fullAt: v.optional(v.number()),
  seals: v.array(
    v.object({
      at: v.number(),
      fromId: v.number(),
      reason: v.picklist(['legacy', 'missing', 'invalid', 'restore']),
      count: v.number(),
    }),
  ),
});

/** Audit procedures. */
export const AUDIT_CONTRACT = {
  'audit.list': procedure({
    input: v.strictObject({
      limit: v.optional(v.pipe(nonNegativeSafeInteger, v.maxValue(500))),
      origin: v.optional(v.pipe(v.string(), v.maxLength(300))),
      kind: v.optional(v.pipe(v.string(), v.maxLength(64))),
      before: v.optional(nonNegativeSafeInteger),
    }),
    output: v.array(auditEntrySchema),
    senders: POPUP,
    activity: false,
  }),
  /** The origins found in the log (at most 200), for the filter. */
  'audit.origins': procedure({ input: noInput, output: v.array(v.string()), senders: POPUP, activity: false }),
  'audit.verify': procedure({
    input: v.strictObject({ full: v.optional(v.boolean()) }),
    output: auditCheckSchema,
    senders: POPUP,
    activity: false,
  }),
  /**
   * One export page as CSV or JSON text, the id to continue `after` (null at the end), and on the first page the check.
   */
  'audit.export': procedure({
    input: v.strictObject({
      format: v.picklist(['csv', 'json']),
      after: v.optional(nonNegativeSafeInteger),
      limit: v.optional(v.pipe(nonNegativeSafeInteger, v.minValue(1), v.maxValue(1000))),
    }),
    output: v.object({ text: v.string(), next: v.nullable(v.number()), verification: v.optional(auditCheckSchema) }),
    senders: POPUP,
    activity: true,
  }),
} as const;
