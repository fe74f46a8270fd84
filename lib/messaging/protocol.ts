/**
 * The one message contract between the extension's contexts and the background.
 *
 * Every message is `{ type, payload }`; `type` names a procedure `<domain>.<verb>`. Each procedure is
 * declared in its domain's module beside this file (`vault.ts`, `accounts.ts`, `proxy.ts`, `clob.ts`,
 * `perps.ts`, `reads.ts` (keyless gateway reads), `approvals.ts`, `grants.ts`, `audit.ts`,
 * `settings.ts`, `session.ts`, `deposit.ts`, `streams.ts`, `notifications.ts`; the list in
 * `lib/messaging/README.md`) with a valibot schema for its payload, a schema for its answer, the sender
 * kinds allowed to call it and whether a call is a person's activity. Senders are identified by the
 * browser's `sender` (extension id, URL, tab) — never by a field in the message. Every procedure is for
 * extension pages (popup, approval window); pages reach the provider through the content script's port
 * only. Replies are `{ ok: true, result } | { ok: false, error: { name, shortMessage, code?, data? } }`
 * (`WireError`, `lib/errors/base.ts`: `code` and `data` only when the error has them) and never carry key
 * material — except `vault.revealOwnerKey`, which exists to show the owner key to a person who has just
 * re-entered the password (popup only).
 *
 * `activity: true` marks the procedures that are a person's actions: only they re-arm
 * the auto-lock timer. Reads the popup and the approval window make on a schedule (`vault.status`,
 * `approval.list`, books, orders) do not, so an open window cannot keep the vault unlocked.
 */
import type * as v from 'valibot';
import type { WireError } from '../errors/base';
import { ACCOUNT_CONTRACT } from './accounts';
import { APPROVAL_CONTRACT } from './approvals';
import { AUDIT_CONTRACT } from './audit';
import { CLOB_CONTRACT } from './clob';
import { DEPOSIT_CONTRACT } from './deposit';
import { GRANT_CONTRACT } from './grants';
import { NOTIFICATIONS_CONTRACT } from './notifications';
import { PERPS_CONTRACT } from './perps';
import { PROXY_CONTRACT } from './proxy';
import { READ_CONTRACT } from './reads';
import { SESSION_CONTRACT } from './session';
import { SETTINGS_CONTRACT } from './settings';
import { STREAMS_CONTRACT } from './streams';
import { VAULT_CONTRACT } from './vault';

export type { SenderKind, Procedure } from './procedure';

/** Procedure table: every procedure of every domain, by name. */
export const PROCEDURES = {
  ...VAULT_CONTRACT,
  ...ACCOUNT_CONTRACT,
  ...SETTINGS_CONTRACT,
  ...PROXY_CONTRACT,
  ...CLOB_CONTRACT,
  ...DEPOSIT_CONTRACT,
  ...PERPS_CONTRACT,
  ...READ_CONTRACT,
  ...AUDIT_CONTRACT,
  ...APPROVAL_CONTRACT,
  ...GRANT_CONTRACT,
  ...SESSION_CONTRACT,
  ...STREAMS_CONTRACT,
  ...NOTIFICATIONS_CONTRACT,
} as const;

/** Name of a procedure, `<domain>.<verb>`. */
export type ProcedureName = keyof typeof PROCEDURES;

/** Whether `type` names a procedure of the table (own keys only). */
export function isProcedureName(type: unknown): type is ProcedureName {
  return typeof type === 'string' && Object.hasOwn(PROCEDURES, type);
}

/** What a handler receives (after validation and transforms). */
export type ProcedureInput<N extends ProcedureName> = v.InferOutput<(typeof PROCEDURES)[N]['input']>;
/** What a caller sends (before validation). */
export type ProcedureCallInput<N extends ProcedureName> = v.InferInput<(typeof PROCEDURES)[N]['input']>;
/** What a handler answers and a caller receives (the output schema's type). */
export type ProcedureOutput<N extends ProcedureName> = v.InferOutput<(typeof PROCEDURES)[N]['output']>;

/** A reply on the wire: the handler's answer, or the error reduced to `WireError`. */
export type Reply<T = unknown> = { ok: true; result: T } | { ok: false; error: WireError };
