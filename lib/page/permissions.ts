/**
 * The EIP-2255 permission methods: `wallet_requestPermissions`, `wallet_getPermissions`,
 * `wallet_revokePermissions`. The connection is an `eth_accounts` permission with MetaMask's
 * `restrictReturnedAccounts` caveat; only `eth_accounts` can be requested (a standing grant is
 * ERC-7715 `wallet_grantPermissions`, `grant-permissions.ts`), and the account is always the active one.
 *
 * A revoke ends the site's connection and its grants: every request of the site started before it ends
 * there, whatever it waits for; its kill switches fire rather than being unset
 * (`ProviderDeps.beforeSiteRevoke`); the provider still serves the chain (no `disconnect` event, the site
 * just has no account).
 */
import type { Authority } from '../authority/epoch';
import type { AccountMethods } from './accounts';
import type { Connections } from './connections';
import type { PageRequest, ProviderDeps } from './context';

/** The EIP-2255 capability of a connection. */
export const ACCOUNTS_CAPABILITY = 'eth_accounts';

/** EIP-2255 caveat type restricting the accounts a site sees (MetaMask's name and shape). */
export const RESTRICT_ACCOUNTS_CAVEAT = 'restrictReturnedAccounts';

/**
 * An EIP-2255 permission as `wallet_getPermissions` / `wallet_requestPermissions` answer it: the site
 * (`invoker`, its origin), the capability (`eth_accounts`), the accounts it may see (caveat
 * `restrictReturnedAccounts`, lowercase-preserving addresses) and when it was granted (`date`, Unix ms).
 */
export type AccountsPermission = {
  invoker: string;
  parentCapability: typeof ACCOUNTS_CAPABILITY;
  caveats: [{ type: typeof RESTRICT_ACCOUNTS_CAVEAT; value: string[] }];
  date: number;
};

/** The `eth_accounts` permission of `origin` for `accounts`, granted at `date` (Unix ms). */
export function accountsPermission(origin: string, accounts: string[], date: number): AccountsPermission {
  return {
    invoker: origin,
    parentCapability: ACCOUNTS_CAPABILITY,
    caveats: [{ type: RESTRICT_ACCOUNTS_CAVEAT, value: accounts }],
    date,
  };
}

/** The EIP-2255 page methods (see the module docstring). */
export class PermissionMethods {
  constructor(
    private readonly d: ProviderDeps,
    private readonly authority: Authority,
    private readonly connections: Connections,
    private readonly accounts: AccountMethods,
  ) {}

  /**
   * `wallet_requestPermissions`: asks for the connection (even when connected) and answers the origin's permissions.
   */
  async request(req: PageRequest): Promise<AccountsPermission[]> {
    await this.accounts.connect(req.origin, req.session.active, true);
    return this.permissions(req.origin);
  }

  /**
   * `wallet_getPermissions`, agreeing with `eth_accounts`: the connection while its account is active and the vault
   * serves it.
   */
  async get(req: PageRequest): Promise<AccountsPermission[]> {
    return req.session.granted && (await this.accounts.servesAccount(req.origin)) ? this.permissions(req.origin) : [];
  }

  /** `wallet_revokePermissions`: ends the origin's connection and grants (see the module docstring); answers `null`. */
  async revoke(req: PageRequest): Promise<null> {
    const { origin } = req;
    // Every request of the site started before this ends here, whatever it waits for.
    this.authority.end(`origin:${origin}`, 'disconnect');
    // The site's own disconnect never unsets a kill switch while its orders may be open.
    await this.d.beforeSiteRevoke?.(origin);
    await this.connections.forget(origin); // no request is served under it from here on
    await this.d.grants?.revokeOrigin(origin);
    // EIP-1193: the provider still serves the chain — no `disconnect`, the site just has no account.
    this.d.emit(origin, 'accountsChanged', []);
    return null;
  }

  /** The origin's EIP-2255 permissions: its connection as `eth_accounts` (none when it has no connection). */
  private async permissions(origin: string): Promise<AccountsPermission[]> {
    const conn = await this.connections.get(origin);
    return conn ? [accountsPermission(origin, conn.accounts, conn.connectedAt)] : [];
  }
}
