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
 */
import * as v from 'valibot';
import { address, nonNegativeSafeInteger, uint256String } from '../validation';
import { settingsSchema } from '../settings';
import { clobOrderRequestsSchema } from '../clob/request';
import type { WireError } from '../errors/base';

/** Who sent a message, from the browser's `sender`. */
export type SenderKind = 'popup' | 'approval' | 'content';

const password = v.pipe(v.string('must be a string'), v.minLength(1, 'is required'), v.maxLength(1024, 'is too long'));
const privateKey = v.pipe(v.string('must be a string'), v.regex(/^0x[0-9a-fA-F]{64}$/, 'must be 0x followed by 64 hex characters'));
const label = v.optional(v.pipe(v.string(), v.maxLength(64, 'must be at most 64 characters')));
const perpsOp = v.strictObject({ type: v.string('must be a command type'), args: v.unknown(), grp: v.optional(v.unknown()) });
const EXT: SenderKind[] = ['popup', 'approval'];
const POPUP: SenderKind[] = ['popup'];

/** Procedure table: payload schema and allowed senders. */
export const PROCEDURES = {
  'vault.status': { input: v.strictObject({}), senders: EXT },
  'vault.create': { input: v.strictObject({ password }), senders: POPUP },
  'vault.unlock': { input: v.strictObject({ password }), senders: EXT },
  'vault.lock': { input: v.strictObject({}), senders: EXT },
  'vault.changePassword': { input: v.strictObject({ oldPassword: password, newPassword: password }), senders: POPUP },
  'vault.importOwnerKey': { input: v.strictObject({ privateKey, label }), senders: POPUP },
  'vault.generateOwnerKey': { input: v.strictObject({ label }), senders: POPUP },
  'vault.revealOwnerKey': { input: v.strictObject({ address, password }), senders: POPUP },
  'vault.accounts': { input: v.strictObject({}), senders: EXT },
  'vault.exportBackup': { input: v.strictObject({}), senders: POPUP },
  'vault.restoreBackup': { input: v.strictObject({ backup: v.pipe(v.string(), v.maxLength(5_000_000)), password }), senders: POPUP },
  'settings.get': { input: v.strictObject({}), senders: EXT },
  'settings.set': { input: v.partial(settingsSchema), senders: POPUP },
  'proxy.issue': { input: v.strictObject({ account: address, expiry: nonNegativeSafeInteger, label }), senders: POPUP },
  'proxy.import': {
    input: v.strictObject({ account: address, privateKey, proxy: address, secret: v.pipe(v.string(), v.minLength(1), v.maxLength(512)), expiry: nonNegativeSafeInteger, label }),
    senders: POPUP,
  },
  'proxy.delete': { input: v.strictObject({ account: address, proxy: address }), senders: POPUP },
  'proxy.list': { input: v.strictObject({ account: v.optional(address) }), senders: EXT },
  'clob.createOrDerive': { input: v.strictObject({ account: address, nonce: v.optional(nonNegativeSafeInteger) }), senders: POPUP },
  'clob.postOrders': { input: v.strictObject({ account: address, orders: clobOrderRequestsSchema }), senders: POPUP },
  'clob.cancel': { input: v.strictObject({ account: address, orderIds: v.pipe(v.array(v.pipe(v.string(), v.maxLength(100))), v.minLength(1), v.maxLength(100)) }), senders: POPUP },
  'clob.openOrders': { input: v.strictObject({ account: address }), senders: POPUP },
  'perps.send': { input: v.strictObject({ account: address, op: perpsOp, label: v.optional(v.unknown()), exp: v.optional(nonNegativeSafeInteger) }), senders: POPUP },
  'perps.read': {
    input: v.strictObject({
      account: v.optional(address),
      name: v.picklist(['invite', 'deposits', 'internalTransfers', 'config', 'funding', 'referral', 'credentials', 'exchange', 'orders', 'instruments', 'summary']),
      query: v.optional(v.record(v.pipe(v.string(), v.regex(/^[a-z_]{1,32}$/)), v.union([v.pipe(v.string(), v.maxLength(100)), nonNegativeSafeInteger]))),
    }),
    senders: POPUP,
  },
  'perps.book': { input: v.strictObject({ iid: nonNegativeSafeInteger }), senders: POPUP },
  'catalogue.markets': {
    input: v.strictObject({ q: v.optional(v.pipe(v.string(), v.maxLength(100))), cursor: v.optional(v.pipe(v.string(), v.maxLength(200))) }),
    senders: POPUP,
  },
  'clob.book': { input: v.strictObject({ tokenId: uint256String }), senders: POPUP },
  'audit.list': { input: v.strictObject({ limit: v.optional(v.pipe(nonNegativeSafeInteger, v.maxValue(500))) }), senders: POPUP },
  'approval.list': { input: v.strictObject({}), senders: EXT },
  'approval.decide': {
    input: v.strictObject({ id: v.pipe(v.string(), v.maxLength(64)), approve: v.boolean(), digest: v.optional(v.pipe(v.string(), v.regex(/^0x[0-9a-f]{64}$/))) }),
    senders: EXT,
  },
  'page.request': {
    input: v.strictObject({ id: v.pipe(v.string(), v.maxLength(64)), method: v.pipe(v.string(), v.maxLength(64)), params: v.optional(v.unknown()) }),
    senders: ['content'] as SenderKind[],
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

