/**
 * Contract of the approval-window procedures: the pending requests, which one the
 * window shows, the empty queue, and the person's decision (bound to the digest shown).
 */
import * as v from 'valibot';
import { APPROVAL, done, EXT, noInput, procedure, shortId } from './procedure';

const digest = v.pipe(v.string(), v.regex(/^0x[0-9a-f]{64}$/));

/**
 * A pending request as the window shows it (`ApprovalView` of lib/approvals/registry): `digest` what
 * will be signed, `artifact` exactly what will be signed (absent for a connection), times Unix ms.
 */
const approvalViewSchema = v.object({
  id: v.string(),
  origin: v.string(),
  kind: v.picklist(['connect', 'perps', 'clob', 'l2', 'grant', 'relayer']),
  title: v.string(),
  lines: v.array(v.string()),
  flags: v.array(v.string()),
  signer: v.nullable(v.picklist(['owner key', 'proxy key', 'API key'])),
  digest: v.string(),
  account: v.nullable(v.object({ address: v.string(), label: v.string() })),
  /**
   * The signing artifact (lib/signer/artifact), shown as it is: the window renders its fields, nothing here reads it.
   */
  artifact: v.optional(v.unknown()),
  refreshAt: v.optional(v.number()),
  grantable: v.optional(v.boolean()),
  markets: v.optional(v.array(v.string())),
  createdAt: v.number(),
  expiresAt: v.number(),
});

/** Approval procedures. */
export const APPROVAL_CONTRACT = {
  'approval.list': procedure({ input: noInput, output: v.array(approvalViewSchema), senders: EXT, activity: false }),
  /** The approval window names the request (id and digest) it is displaying: closing it ends only that one. */
  'approval.showing': procedure({
    input: v.strictObject({ id: shortId, digest }),
    output: done,
    senders: APPROVAL,
    activity: false,
  }),
  /**
   * The approval window found the queue empty: the background closes it unless a request arrived meanwhile (`{ closed
   * }`).
   */
  'approval.empty': procedure({
    input: noInput,
    output: v.object({ closed: v.boolean() }),
    senders: APPROVAL,
    activity: false,
  }),
  /**
   * Approves (bound to `digest`, the one shown) or rejects request `id`. Throws `Approvals.ApprovalNotFoundError`,
   * `ApprovalMismatchError`.
   */
  'approval.decide': procedure({
    input: v.strictObject({ id: shortId, approve: v.boolean(), digest: v.optional(digest) }),
    output: done,
    senders: EXT,
    activity: true,
  }),
} as const;
