/**
 * Contract of the account procedures: the person's choice of active owner key, and the
 * non-secret view of an owner key the popup lists (`Account`).
 */
import * as v from 'valibot';
import { address } from '../validation';
import { POPUP, procedure } from './procedure';

/** A proxy key as the popup lists it: address, expiry (Unix ms), label. Never its key or secret. */
export const proxyViewSchema = v.object({ proxy: v.string(), expiry: v.number(), label: v.string() });

/**
 * An owner key as the popup lists it: address, label, its proxies, whether CLOB API credentials are
 * stored and, when they are, their signature type (`clobSignatureType`: 0 EOA, 1 proxy, 2 Safe, 3 deposit
 * wallet — the popup never offers a deposit wallet over credentials of types 0-2 without saying it
 * switches the account's orders).
 */
export const accountSchema = v.object({
  address: v.string(),
  label: v.string(),
  proxies: v.array(proxyViewSchema),
  hasClobCredentials: v.boolean(),
  clobSignatureType: v.optional(v.picklist([0, 1, 2, 3])),
});

/** Account procedures. */
export const ACCOUNT_CONTRACT = {
  /** Makes `address` the active account; `changed` false when it already was. Throws `Accounts.UnknownAccountError`. */
  'account.select': procedure({
    input: v.strictObject({ address }),
    output: v.object({ activeAccount: v.string(), changed: v.boolean() }),
    senders: POPUP,
    activity: true,
  }),
} as const;
