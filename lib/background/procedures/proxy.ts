/** Handlers of the proxy-key procedures (contract: lib/messaging/proxy.ts). Answers never carry a key or secret. */
import { privateKeyToAccount } from 'viem/accounts';
import type { PROXY_CONTRACT } from '../../messaging/proxy';
import { ProxyKeyMismatchError } from '../../vault/errors';
import { PERSON_SCOPES } from '../../authority/epoch';
import type { ContractHandlers, ProcedureDeps } from './deps';

/** Issue (owner-signed at the gateway), import (the key must be the proxy's: `ProxyKeyMismatchError`), delete, list. */
export function proxyProcedures(d: ProcedureDeps): ContractHandlers<typeof PROXY_CONTRACT> {
  const { vault, service } = d;
  return {
    'proxy.issue': async ({ account, expiry, label }) => {
      const p = await service.issueProxy(account, { expiry, authority: service.authority.capture(PERSON_SCOPES), ...(label ? { label } : {}) });
      return { proxy: p.proxy, expiry: p.expiry, label: p.label };
    },
    'proxy.import': async ({ account, privateKey, proxy, secret, expiry, label }) => {
      if (privateKeyToAccount(privateKey).address.toLowerCase() !== proxy.toLowerCase()) throw new ProxyKeyMismatchError();
      const p = await vault.putProxy({ account, privateKey, proxy, secret, expiry, ...(label ? { label } : {}) });
      return { proxy: p.proxy, expiry: p.expiry, label: p.label };
    },
    'proxy.delete': async ({ account, proxy }) => {
      await service.deleteProxy(account, proxy, { origin: 'extension', authority: service.authority.capture(PERSON_SCOPES) });
      return null;
    },
    'proxy.list': async ({ account }) => (await vault.listProxies(account)).map(({ account: a, proxy, expiry, label }) => ({ account: a, proxy, expiry, label })),
  };
}
