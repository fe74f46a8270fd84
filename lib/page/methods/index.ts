/**
 * Every page method Countersign serves, one record each (`../method.ts`), in the order the documentation lists
 * them. What is derived from this list: `PageMethod` and `PageCall` (here), admission (`../policy.ts` `admit`),
 * the session gates (`../gates.ts`), parsing (`parseCall`), dispatch (`../request.ts`), the capability answer, and
 * the methods table of `lib/dapp/README.md` (`docs.ts`, `npm run docs:methods`). Adding a method: its record in
 * its family's file, listed in `PAGE_METHODS` here, and its tests (`lib/page/README.md` "To add a page method");
 * `methods.test.ts` names what a record still lacks.
 */
import type * as v from 'valibot';
import type { GRANTABLE_PAGE_METHODS } from '../../grants/requests';
import { parseParams, type PageMethodRecord } from '../method';
import { ethAccounts, ethChainId, ethRequestAccounts, walletConnect } from './accounts';
import { countersignGetCapabilities, ethSignTypedDataV4 } from './extension';
import { clobPostOrders, clobSignRequest } from './orderbook';
import {
  walletGetPermissions,
  walletGrantPermissions,
  walletRequestPermissions,
  walletRevokePermissions,
} from './permissions';
import { perpsSendCommand, perpsSignCommand } from './perps';

/** The records, in documentation order. */
export const PAGE_METHODS = [
  ethChainId,
  ethAccounts,
  ethRequestAccounts,
  walletConnect,
  walletRequestPermissions,
  walletGetPermissions,
  walletRevokePermissions,
  walletGrantPermissions,
  perpsSendCommand,
  perpsSignCommand,
  clobPostOrders,
  clobSignRequest,
  countersignGetCapabilities,
  ethSignTypedDataV4,
] as const;

type Records = (typeof PAGE_METHODS)[number];

/** A page method's name (a record of `PAGE_METHODS`). */
export type PageMethod = Records['name'];

/** One page request as the method families receive it: the method and its params, parsed by its record's schema. */
export type PageCall = {
  [R in Records as R['name']]: { method: R['name']; params: v.InferOutput<R['params']> };
}[PageMethod];

const BY_NAME: ReadonlyMap<string, PageMethodRecord> = new Map(PAGE_METHODS.map((r) => [r.name, r]));

/** Whether `m` is a page method Countersign serves. */
export function isPageMethod(m: string): m is PageMethod {
  return BY_NAME.has(m);
}

/** The record of `method`. */
export function methodRecord(method: PageMethod): PageMethodRecord {
  const r = BY_NAME.get(method);
  if (!r) throw new TypeError(`no page method ${method}`);
  return r;
}

/**
 * Parses `params` of an admitted `method` once into a `PageCall` (its record's schema, from `../params.ts`).
 * Throws `InvalidFieldError` (-32602) naming the field (`params.op.type`, `params.orders[0].price`,
 * `params.permissions[0].data.maxNotional` …).
 */
export function parseCall<M extends PageMethod>(method: M, params: unknown): Extract<PageCall, { method: M }> {
  return { method, params: parseParams(methodRecord(method), params) } as Extract<PageCall, { method: M }>;
}

/** Compile-time check: every method a grant may cover (`GRANTABLE_PAGE_METHODS`) is a page method. */
type IsTrue<T extends true> = T;
// A check the compiler runs; nothing uses the type.
type GrantableArePageMethods = IsTrue<(typeof GRANTABLE_PAGE_METHODS)[number] extends PageMethod ? true : false>;
