/**
 * The vault's record kinds (`secrets` store: `owner:`, `proxy:`, `clob:`, `deposit:`, `grant:` ids): each
 * kind's clear metadata (schemas, checked on read), its non-secret view, and the shape of its sealed part.
 * How records are sealed and vouched for: `./records.ts`.
 */
import * as v from 'valibot';
import { address, parseOrThrow } from '../validation';
import type { Address, Hex } from 'viem';
import type { SecretRecord } from './db';

/** Non-secret view of an owner key. */
export type OwnerInfo = { address: Address; label: string; createdAt: number };
/** Non-secret view of a proxy key. `expiry` Unix ms. */
export type ProxyInfo = { id: string; account: Address; proxy: Address; expiry: number; label: string };
/** Non-secret view of CLOB credentials. */
export type ClobInfo = {
  id: string;
  account: Address;
  nonce: number;
  signatureType: 0 | 1 | 2 | 3;
  funder: Address | null;
};

/**
 * The clear metadata of each record kind (written by `storeOwnerKey`, `putProxy`, `putClobCredentials`,
 * `putDepositWallet`).
 */
export const ownerMetaSchema = v.object({ address, label: v.optional(v.string()) });
const proxyMetaSchema = v.object({
  account: address,
  proxy: address,
  expiry: v.number(),
  label: v.optional(v.string()),
});
const clobMetaSchema = v.object({
  account: address,
  nonce: v.number(),
  signatureType: v.picklist([0, 1, 2, 3]),
  funder: v.nullable(address),
});
/** The clear metadata of a deposit wallet record (`deposit:<owner>`). */
export const depositMetaSchema = v.object({
  account: address,
  wallet: address,
  kind: v.picklist(['uups', 'beacon']),
  beacon: address,
});
/** Non-secret view of a deposit wallet: owner `account`, its `wallet`, UUPS or beacon (`beacon` zero for UUPS). */
export type DepositWalletInfo = v.InferOutput<typeof depositMetaSchema>;

/** The proxy record `r`'s clear view (`InvalidFieldError` when its metadata is malformed). */
export const proxyInfoOf = (r: SecretRecord): ProxyInfo => {
  const m = parseOrThrow(proxyMetaSchema, r.meta, 'meta');
  return { id: r.id, account: m.account, proxy: m.proxy, expiry: m.expiry, label: m.label ?? '' };
};
/** The CLOB credential record `r`'s clear view (`InvalidFieldError` when its metadata is malformed). */
export const clobInfoOf = (r: SecretRecord): ClobInfo => {
  const m = parseOrThrow(clobMetaSchema, r.meta, 'meta');
  return { id: r.id, account: m.account, nonce: m.nonce, signatureType: m.signatureType, funder: m.funder };
};

/** The sealed part of a proxy record. */
export type ProxySecret = { privateKey: Hex; secret: string };
/** The sealed part of a CLOB credential record. */
export type ClobSecret = { apiKey: string; secret: string; passphrase: string };
/** A deposit wallet's builder API credentials (the sealed part of `deposit:<owner>`). */
export type BuilderSecret = { key: string; secret: string; passphrase: string };

/** A grant head as the vault stores it: sealed content it does not read, except the grant's id and account. */
export type SealedHead = { grant: { id: string; account: string } };
