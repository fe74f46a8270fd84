/** Handlers of the proxy-key procedures (contract: lib/messaging/proxy.ts). Answers never carry a key or secret. */
import { privateKeyToAccount } from 'viem/accounts';
import type { PROXY_CONTRACT } from '../../messaging/proxy';
import { ProxyKeyMismatchError } from '../../vault/errors';
import type { Vault } from '../../vault/vault';
import { PERSON_SCOPES } from '../../authority/epoch';
import { InvalidFieldError } from '../../validation';
import type { ContractHandlers, ProcedureDeps } from './deps';

/** The longest a proxy key may live (ms): what the venue keeps a proxy for, and the popup's longest choice. */
const MAX_PROXY_LIFETIME_MS = 180 * 86_400_000;

/**
 * `InvalidFieldError` (`expiry`) unless `expiry` (Unix ms) is after `now` and at most `MAX_PROXY_LIFETIME_MS` after it.
 */
function checkProxyExpiry(expiry: number, now: number): void {
  if (expiry <= now) throw new InvalidFieldError({ field: 'expiry', reason: 'must be in the future' });
  if (expiry > now + MAX_PROXY_LIFETIME_MS)
    throw new InvalidFieldError({ field: 'expiry', reason: 'must be at most 180 days from now' });
}

/** `InvalidFieldError` (`account`) unless the vault holds the owner key of `account`. */
async function requireOwner(vault: Vault, account: string): Promise<void> {
  const owners = await vault.listOwners();
  if (!owners.some((o) => o.address.toLowerCase() === account.toLowerCase()))
    throw new InvalidFieldError({ field: 'account', reason: 'is not an owner key this vault holds' });
}

/**
 * Issue (owner-signed at the gateway; `expiry` in the future and at most 180 days away), import (the key must
 * be the proxy's: `ProxyKeyMismatchError`; the account an owner key of the vault; never a proxy stored under another
 * account), delete (only a proxy key the vault holds for that account: nothing is signed otherwise), list.
 */
export function proxyProcedures(d: ProcedureDeps): ContractHandlers<typeof PROXY_CONTRACT> {
  const { vault, service } = d;
  return {
    'proxy.issue': async ({ account, expiry, label }) => {
      const authority = service.authority.capture(PERSON_SCOPES);
      checkProxyExpiry(expiry, Date.now());
      const p = await service.issueProxy(account, { expiry, authority, ...(label ? { label } : {}) });
      return { proxy: p.proxy, expiry: p.expiry, label: p.label };
    },
    'proxy.import': async ({ account, privateKey, proxy, secret, expiry, label }) => {
      if (privateKeyToAccount(privateKey).address.toLowerCase() !== proxy.toLowerCase())
        throw new ProxyKeyMismatchError();
      await requireOwner(vault, account);
      const other = (await vault.listProxies()).find(
        (p) => p.proxy.toLowerCase() === proxy.toLowerCase() && p.account.toLowerCase() !== account.toLowerCase(),
      );
      if (other)
        throw new InvalidFieldError({ field: 'proxy', reason: 'is stored for another account; delete it there first' });
      const p = await vault.putProxy({ account, privateKey, proxy, secret, expiry, ...(label ? { label } : {}) });
      return { proxy: p.proxy, expiry: p.expiry, label: p.label };
    },
    'proxy.delete': async ({ account, proxy }) => {
      const authority = service.authority.capture(PERSON_SCOPES);
      const held = (await vault.listProxies(account)).some((p) => p.proxy.toLowerCase() === proxy.toLowerCase());
      if (!held)
        throw new InvalidFieldError({ field: 'proxy', reason: 'is not a proxy key this vault holds for the account' });
      await service.deleteProxy(account, proxy, { origin: 'extension', authority });
      return null;
    },
    'proxy.list': async ({ account }) =>
      (await vault.listProxies(account)).map(({ account: a, proxy, expiry, label }) => ({
        account: a,
        proxy,
        expiry,
        label,
      })),
  };
}
