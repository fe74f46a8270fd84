/**
 * The trading session's bundle (see `./session.ts` "States"): its shape and AAD, what a session keeps
 * (`keptBundle`) and which kept proxy key it signs with (`liveProxyOf`).
 */
import type { Hex } from 'viem';
import type { SecretRecord } from './db';
import {
  clobInfoOf,
  proxyInfoOf,
  type BuilderSecret,
  type ClobInfo,
  type ClobSecret,
  type ProxyInfo,
  type ProxySecret,
  type SealedHead,
} from './record-kinds';

/** AAD of the trading session's bundle (`meta/session`). */
export const SESSION_AAD = 'countersign/v1/meta/session';
/**
 * The trading session's bundle, sealed by the session key in `meta/session` (AAD `SESSION_AAD`).
 * `accounts` lower-case; `auditKey` the audit MAC key's 32 raw bytes, base64.
 */
export type SessionBundle = {
  v: 1;
  accounts: string[];
  proxies: { info: ProxyInfo; privateKey: Hex; secret: string }[];
  clob: { info: ClobInfo; apiKey: string; secret: string; passphrase: string }[];
  /**
   * The kept accounts' deposit-wallet builder credentials (`account` lower-case). Absent in bundles sealed before them.
   */
  deposit?: { account: string; key: string; secret: string; passphrase: string }[];
  /** Each grant head (`lib/grants/use-records.ts`); its uses are loose bucket records sealed by the session key. */
  grants: SealedHead[];
  auditKey: string;
};

/**
 * What a trading session keeps of `records` (the `secrets` store, in its order): the `keep` accounts' (lower-case)
 * proxy keys unexpired at `now` (Unix ms) with their secret, their CLOB API credentials and deposit-wallet builder
 * credentials, and every grant head — each opened with `read` (inside `exclusive`). `auditKey` is left empty for the
 * caller to fill. Throws what `read` throws (`TamperedRecordError`, `DecryptError`).
 */
export async function keptBundle(
  records: readonly SecretRecord[],
  keep: ReadonlySet<string>,
  now: number,
  read: <T>(id: string) => Promise<{ secret: T }>,
): Promise<SessionBundle> {
  const bundle: SessionBundle = {
    v: 1,
    accounts: [...keep],
    proxies: [],
    clob: [],
    deposit: [],
    grants: [],
    auditKey: '',
  };
  for (const r of records) {
    if (r.kind === 'proxy' && keep.has(r.account.toLowerCase()) && Number(r.meta.expiry) > now) {
      const { secret } = await read<ProxySecret>(r.id);
      bundle.proxies.push({ info: proxyInfoOf(r), privateKey: secret.privateKey, secret: secret.secret });
    } else if (r.kind === 'clob' && keep.has(r.account.toLowerCase())) {
      const { secret } = await read<ClobSecret>(r.id);
      bundle.clob.push({ info: clobInfoOf(r), ...secret });
    } else if (r.kind === 'deposit' && keep.has(r.account.toLowerCase())) {
      const { secret } = await read<BuilderSecret>(r.id);
      bundle.deposit?.push({
        account: r.account.toLowerCase(),
        key: secret.key,
        secret: secret.secret,
        passphrase: secret.passphrase,
      });
    } else if (r.kind === 'grant') {
      bundle.grants.push((await read<SealedHead>(r.id)).secret);
    }
  }
  return bundle;
}

/**
 * The kept proxy key of `account` a trading session signs with: the unexpired one (expiry after `now`,
 * Unix ms) with the latest expiry, or undefined.
 */
export function liveProxyOf(
  bundle: SessionBundle,
  account: string,
  now: number,
): SessionBundle['proxies'][number] | undefined {
  const a = account.toLowerCase();
  return bundle.proxies
    .filter((p) => p.info.account.toLowerCase() === a && p.info.expiry > now)
    .sort((x, y) => y.info.expiry - x.info.expiry)[0];
}
