/**
 * The one message contract between the extension's contexts and the background (issue #4 §6).
 *
 * Every message is `{ type, payload }`; `type` names a procedure `<domain>.<verb>`; each procedure has a
 * valibot schema for its payload and the list of sender kinds allowed to call it. Senders are
 * identified by the browser's `sender` (extension id, URL, tab) — never by a field in the message.
 * Content scripts may only call `page.request` (the approval flow); every vault, key and signing
 * procedure is for extension pages (popup, approval window) only. Replies are
 * `{ ok: true, result } | { ok: false, error: { name, shortMessage, code? } }` and never carry key
 * material — except `vault.revealOwnerKey`, which exists to show the owner key to a person who has
 * just re-entered the password (popup only).
 *
 * `activity: true` marks the procedures that are a person's actions (issue #14 §2): only they re-arm
 * the auto-lock timer. Reads the popup and the approval window make on a schedule (`vault.status`,
 * `approval.list`, books, orders) do not, so an open window cannot keep the vault unlocked.
 */
import * as v from 'valibot';
import { address, nonNegativeSafeInteger, uint256String } from '../validation';
import { settingsSchema } from '../settings';
import { clobOrderRequestsSchema } from '../clob/request';
import { PERPS_READS, type PerpsReadName } from '../perps/reads';
import { grantLimitsSchema } from '../grants/schema';
import type { WireError } from '../errors/base';

/** Who sent a message, from the browser's `sender`. */
export type SenderKind = 'popup' | 'approval' | 'content';

const password = v.pipe(v.string('must be a string'), v.minLength(1, 'is required'), v.maxLength(1024, 'is too long'));
const privateKey = v.pipe(v.string('must be a string'), v.regex(/^0x[0-9a-fA-F]{64}$/, 'must be 0x followed by 64 hex characters'));
const label = v.optional(v.pipe(v.string(), v.maxLength(64, 'must be at most 64 characters')));
const perpsOp = v.strictObject({ type: v.string('must be a command type'), args: v.unknown(), grp: v.optional(v.unknown()) });
const EXT: SenderKind[] = ['popup', 'approval'];
const POPUP: SenderKind[] = ['popup'];

/** Procedure table: payload schema, allowed senders, and whether a call is a person's activity. */
export const PROCEDURES = {
  'vault.status': { input: v.strictObject({}), senders: EXT, activity: false },
  'vault.create': { input: v.strictObject({ password }), senders: POPUP, activity: true },
  'vault.unlock': { input: v.strictObject({ password }), senders: EXT, activity: true },
  'vault.lock': { input: v.strictObject({}), senders: EXT, activity: false },
  'vault.changePassword': { input: v.strictObject({ oldPassword: password, newPassword: password }), senders: POPUP, activity: true },
  'vault.importOwnerKey': { input: v.strictObject({ privateKey, label }), senders: POPUP, activity: true },
  'vault.generateOwnerKey': { input: v.strictObject({ label }), senders: POPUP, activity: true },
  'vault.revealOwnerKey': { input: v.strictObject({ address, password }), senders: POPUP, activity: true },
  'vault.accounts': { input: v.strictObject({}), senders: EXT, activity: false },
  'vault.exportBackup': { input: v.strictObject({}), senders: POPUP, activity: true },
  'vault.restoreBackup': { input: v.strictObject({ backup: v.pipe(v.string(), v.maxLength(5_000_000)), password }), senders: POPUP, activity: true },
  'settings.get': { input: v.strictObject({}), senders: EXT, activity: false },
  'settings.set': { input: v.partial(settingsSchema), senders: POPUP, activity: true },
  'proxy.issue': { input: v.strictObject({ account: address, expiry: nonNegativeSafeInteger, label }), senders: POPUP, activity: true },
  'proxy.import': {
    input: v.strictObject({ account: address, privateKey, proxy: address, secret: v.pipe(v.string(), v.minLength(1), v.maxLength(512)), expiry: nonNegativeSafeInteger, label }),
    senders: POPUP,
    activity: true,
  },
  'proxy.delete': { input: v.strictObject({ account: address, proxy: address }), senders: POPUP, activity: true },
  'proxy.list': { input: v.strictObject({ account: v.optional(address) }), senders: EXT, activity: false },
  'clob.createOrDerive': { input: v.strictObject({ account: address, nonce: v.optional(nonNegativeSafeInteger) }), senders: POPUP, activity: true },
  'clob.postOrders': { input: v.strictObject({ account: address, orders: clobOrderRequestsSchema }), senders: POPUP, activity: true },
  'clob.cancel': { input: v.strictObject({ account: address, orderIds: v.pipe(v.array(v.pipe(v.string(), v.maxLength(100))), v.minLength(1), v.maxLength(100)) }), senders: POPUP, activity: true },
  'clob.openOrders': { input: v.strictObject({ account: address }), senders: POPUP, activity: false },
  'perps.send': { input: v.strictObject({ account: address, op: perpsOp, label: v.optional(v.unknown()), exp: v.optional(nonNegativeSafeInteger) }), senders: POPUP, activity: true },
  'perps.read': {
    input: v.strictObject({
      account: v.optional(address),
      name: v.picklist(Object.keys(PERPS_READS) as PerpsReadName[]),
      query: v.optional(v.record(v.pipe(v.string(), v.regex(/^[a-z0-9_]{1,32}$/)), v.union([v.pipe(v.string(), v.maxLength(100)), nonNegativeSafeInteger]))),
    }),
    senders: POPUP,
    activity: false,
  },
  'perps.book': { input: v.strictObject({ iid: nonNegativeSafeInteger }), senders: POPUP, activity: false },
  'catalogue.markets': {
    input: v.strictObject({ q: v.optional(v.pipe(v.string(), v.maxLength(100))), cursor: v.optional(v.pipe(v.string(), v.maxLength(200))) }),
    senders: POPUP,
    activity: true,
  },
  'clob.book': { input: v.strictObject({ tokenId: uint256String }), senders: POPUP, activity: false },
  'clob.trades': { input: v.strictObject({ account: address }), senders: POPUP, activity: false },
  'data.portfolio': { input: v.strictObject({ account: address, cursor: v.optional(v.pipe(v.string(), v.maxLength(200))) }), senders: POPUP, activity: false },
  // The audit log (issue #17): pages newest first (`before`: the last id shown), checks incrementally
  // (`full`: a background full check; call again to poll its progress), exports a page at a time
  // oldest first (`after`: the last id exported).
  'audit.list': {
    input: v.strictObject({
      limit: v.optional(v.pipe(nonNegativeSafeInteger, v.maxValue(500))),
      origin: v.optional(v.pipe(v.string(), v.maxLength(300))),
      kind: v.optional(v.pipe(v.string(), v.maxLength(64))),
      before: v.optional(nonNegativeSafeInteger),
    }),
    senders: POPUP,
    activity: false,
  },
  'audit.origins': { input: v.strictObject({}), senders: POPUP, activity: false },
  'audit.verify': { input: v.strictObject({ full: v.optional(v.boolean()) }), senders: POPUP, activity: false },
  'audit.export': {
    input: v.strictObject({ format: v.picklist(['csv', 'json']), after: v.optional(nonNegativeSafeInteger), limit: v.optional(v.pipe(nonNegativeSafeInteger, v.minValue(1), v.maxValue(1000))) }),
    senders: POPUP,
    activity: true,
  },
  'approval.list': { input: v.strictObject({}), senders: EXT, activity: false },
  /** The approval window names the request (id and digest) it is displaying: closing it ends only that one (issue #17 §10). */
  'approval.showing': {
    input: v.strictObject({ id: v.pipe(v.string(), v.maxLength(64)), digest: v.pipe(v.string(), v.regex(/^0x[0-9a-f]{64}$/)) }),
    senders: ['approval'] as SenderKind[],
    activity: false,
  },
  /** The approval window found the queue empty: the background closes it unless a request arrived meanwhile (`{ closed }`). */
  'approval.empty': { input: v.strictObject({}), senders: ['approval'] as SenderKind[], activity: false },
  'account.select': { input: v.strictObject({ address }), senders: POPUP, activity: true },
  'session.activity': { input: v.strictObject({}), senders: POPUP, activity: true },
  'grant.create': {
    input: v.strictObject({ approvalId: v.pipe(v.string(), v.maxLength(64)), limits: grantLimitsSchema, minutes: v.pipe(v.number(), v.safeInteger(), v.minValue(1), v.maxValue(24 * 60)) }),
    senders: EXT,
    activity: true,
  },
  'grant.offer': { input: v.strictObject({ approvalId: v.pipe(v.string(), v.maxLength(64)) }), senders: EXT, activity: false },
  'grant.list': { input: v.strictObject({}), senders: POPUP, activity: false },
  'deadman.status': { input: v.strictObject({}), senders: POPUP, activity: false },
  'panic.run': { input: v.strictObject({ closePositions: v.boolean() }), senders: POPUP, activity: true },
  'grant.revoke': { input: v.strictObject({ id: v.pipe(v.string(), v.maxLength(64)) }), senders: POPUP, activity: true },
  'approval.decide': {
    input: v.strictObject({ id: v.pipe(v.string(), v.maxLength(64)), approve: v.boolean(), digest: v.optional(v.pipe(v.string(), v.regex(/^0x[0-9a-f]{64}$/))) }),
    senders: EXT,
    activity: true,
  },
  'page.request': {
    input: v.strictObject({ id: v.pipe(v.string(), v.maxLength(64)), method: v.pipe(v.string(), v.maxLength(64)), params: v.optional(v.unknown()) }),
    senders: ['content'] as SenderKind[],
    activity: false,
  },
} as const;

export type ProcedureName = keyof typeof PROCEDURES;
/** What a handler receives (after validation and transforms). */
export type ProcedureInput<N extends ProcedureName> = v.InferOutput<(typeof PROCEDURES)[N]['input']>;
/** What a caller sends (before validation). */
export type ProcedureCallInput<N extends ProcedureName> = v.InferInput<(typeof PROCEDURES)[N]['input']>;

/** A message on the wire. */
export type Message = { type: string; payload?: unknown };
/** A reply on the wire. */
export type Reply<T = unknown> = { ok: true; result: T } | { ok: false; error: WireError };

