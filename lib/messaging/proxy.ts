/**
 * Contract of the proxy-key procedures (PROTOCOL.md §1.3-1.4): issue (owner-signed `CreateProxy`),
 * import, delete (owner-signed `deleteProxy` at the gateway first), list. Answers never carry the proxy's
 * key or secret.
 */
import * as v from 'valibot';
import { address, nonNegativeSafeInteger } from '../validation';
import { proxyViewSchema } from './accounts';
import { done, EXT, label, POPUP, privateKey, procedure } from './procedure';

/** Proxy-key procedures. `expiry` Unix ms. */
export const PROXY_CONTRACT = {
  'proxy.issue': procedure({
    input: v.strictObject({ account: address, expiry: nonNegativeSafeInteger, label }),
    output: proxyViewSchema,
    senders: POPUP,
    activity: true,
  }),
  'proxy.import': procedure({
    input: v.strictObject({
      account: address,
      privateKey,
      proxy: address,
      secret: v.pipe(v.string(), v.minLength(1), v.maxLength(512)),
      expiry: nonNegativeSafeInteger,
      label,
    }),
    output: proxyViewSchema,
    senders: POPUP,
    activity: true,
  }),
  'proxy.delete': procedure({
    input: v.strictObject({ account: address, proxy: address }),
    output: done,
    senders: POPUP,
    activity: true,
  }),
  'proxy.list': procedure({
    input: v.strictObject({ account: v.optional(address) }),
    output: v.array(v.object({ account: v.string(), ...proxyViewSchema.entries })),
    senders: EXT,
    activity: false,
  }),
} as const;
