/**
 * Contract of the account procedures (issue #14 §3): the person's choice of active owner key, and the
 * non-secret view of an owner key the popup lists (`Account`).
 */
import * as v from 'valibot';
import { address } from '../validation';
import { POPUP, procedure } from './procedure';

/** A proxy key as the popup lists it: address, expiry (Unix ms), label. Never its key or secret. */
export const proxyViewSchema = v.object({ proxy: v.string(), expiry: v.number(), label: v.string() });

/** An owner key as the popup lists it: address, label, its proxies, and whether CLOB API credentials are stored. */
export const accountSchema = v.object({
  address: v.string(),
  label: v.string(),
  proxies: v.array(proxyViewSchema),
  hasClobCredentials: v.boolean(),
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
