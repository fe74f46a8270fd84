/**
 * The account methods: `eth_chainId`, `eth_accounts`, `eth_requestAccounts` / `wallet_connect`. A
 * connection records the account it was granted; a site sees an account only while that account is the
 * active one and the vault serves it (unlocked, or a trading session in which the site holds a grant).
 *
 * Connection requests of one origin for one account share one pending approval: a page calling it 5
 * times at once (or 500) opens one window and every call gets its answer. On a locked vault the window
 * shows the unlock form first, then the connection; an approval that reaches a still-locked vault
 * connects nothing.
 */
import { keccak256, numberToHex, toHex } from 'viem';
import { disconnected, unauthorized } from '../errors/rpc';
import { shortAddress } from '../format';
import { readSettings } from '../settings';
import type { Connection } from '../vault/db';
import type { OwnerInfo } from '../vault/vault';
import type { Connections } from './connections';
import { TTL_FUNDS_MS } from './consent';
import { LOCKED_MESSAGE, type PageRequest, type ProviderDeps } from './context';

/** The account page methods (see the module docstring). */
export class AccountMethods {
  /** Pending connection approvals by `origin|account` (every call of that pair joins the one pending). */
  private readonly connecting = new Map<string, Promise<string[]>>();

  constructor(
    private readonly d: ProviderDeps,
    private readonly connections: Connections,
  ) {}

  /** `eth_chainId`: the chain id as hex (the settings' order-book chain); needs no session. */
  async chainId(): Promise<string> {
    return numberToHex((await readSettings(this.d.db)).clobChainId);
  }

  /** `eth_accounts`: the connection's account while it is active and the vault serves it, else `[]`. */
  async accounts(req: PageRequest): Promise<string[]> {
    const { granted } = req.session;
    return granted && (await this.servesAccount(req.origin)) ? [granted.address] : [];
  }

  /**
   * Whether the vault shows `origin` its account now: unlocked, or a trading session in which the origin holds a grant.
   */
  async servesAccount(origin: string): Promise<boolean> {
    if (this.d.vault.unlocked) return true;
    return this.d.vault.sessionLive && !!(await this.d.grants?.list())?.some((g) => g.origin === origin);
  }

  /**
   * `eth_requestAccounts` / `wallet_connect` (and `wallet_requestPermissions` with `force`: it asks even
   * when the site is already connected to this account): the connected account, after one approval per
   * origin and account. Throws 4100 without an account, 4900 in a trading session or a still-locked
   * vault, 4001 when the person rejects.
   */
  async connect(origin: string, active: OwnerInfo | undefined, force: boolean): Promise<string[]> {
    if (!active) throw unauthorized('Countersign has no account yet. Finish setup in the extension first.');
    if (!force && this.d.vault.unlocked) {
      const existing = await this.connections.get(origin);
      if (existing?.accounts[0]?.toLowerCase() === active.address.toLowerCase()) return existing.accounts;
    }
    // The check of `connecting` and its `set` run in one turn: calls that arrive together share one approval.
    const key = `${origin}|${active.address.toLowerCase()}`;
    const pending = this.connecting.get(key);
    if (pending) return pending;
    const run = this.connectOnce(origin, active, force).finally(() => this.connecting.delete(key));
    this.connecting.set(key, run);
    return run;
  }

  /**
   * One connection approval. On a locked vault (not a trading session, which serves only its grants) the
   * approval window shows the unlock form first, then this approval; it resolves only once the vault is
   * unlocked and the person approved (4001 when the window is closed, 4900 if it is still locked).
   */
  private async connectOnce(origin: string, active: OwnerInfo, force: boolean): Promise<string[]> {
    const existing = await this.connections.get(origin);
    const same = !!existing && existing.accounts[0]?.toLowerCase() === active.address.toLowerCase();
    if (existing && same && !force && this.d.vault.unlocked) return existing.accounts;
    if (this.d.vault.sessionLive)
      throw disconnected(
        'Countersign is in a trading session: only requests within a ' +
          "site's standing permission are served. Unlock Countersign first.",
      );
    const locked = !this.d.vault.unlocked;
    this.d.registry.checkCapacity(origin);
    const { approved } = this.d.registry.add(
      {
        origin,
        kind: 'connect',
        title: same ? 'Reconnect this site' : 'Connect this site',
        lines: [
          `Let ${origin} see your address ` +
            `${shortAddress(active.address)}${active.label ? ` (“${active.label}”)` : ''} and ask you to sign trades.`,
          'Every signature still needs your approval.',
        ],
        flags: [
          ...(existing && !same
            ? ['This site was connected to another of your accounts; it will now act for this one.']
            : []),
          ...(locked ? ['Countersign was locked when this site asked: unlock first.'] : []),
        ],
        signer: null,
        account: { address: active.address, label: active.label },
        digest: keccak256(toHex(`connect:${origin}:${active.address}`)),
      },
      TTL_FUNDS_MS,
    );
    await this.d.showApprovals();
    await approved;
    // Fails closed: an approval that reached a still-locked vault connects nothing.
    if (!this.d.vault.unlocked) throw disconnected(LOCKED_MESSAGE);
    const connection: Connection = { origin, accounts: [active.address], connectedAt: Date.now() };
    await this.connections.save(connection);
    this.d.emit(origin, 'connect', { chainId: await this.chainId() });
    this.d.emit(origin, 'accountsChanged', [active.address]);
    return [active.address];
  }
}
