/**
 * The vault's status for the popup (issue #4, #14, #17): lock state, owner keys and the active account,
 * pending approvals and the trading session; switching the active account (with the notice of what the
 * switch cancelled) and locking. The popup root chooses its screen from `status`.
 */
import { computed, signal } from '@preact/signals';
import { call as popupCall, messageOf, type Account, type Status } from '../api';
import type { Call } from './perps';

/** A live proxy key (expiry in the future, Unix ms) of `account`. */
export const hasLiveProxy = (account: Pick<Account, 'proxies'> | undefined, now = Date.now()) => !!account?.proxies.some((p) => p.expiry > now);

/** The notice after switching to `address`: the account's label (or address) and what the switch did. */
export const switchedText = (accounts: readonly Pick<Account, 'address' | 'label'>[], address: string) =>
  `Now acting as ${accounts.find((x) => x.address === address)?.label || address}. Pending site requests were cancelled and connected sites were told.`;

/** The vault store. */
export type VaultStore = ReturnType<typeof createVaultStore>;

/** Creates the store; `refresh()` reads the status. */
export function createVaultStore(call: Call = popupCall) {
  const status = signal<Status | undefined>(undefined);
  /** The notice after an account switch (or why it failed). */
  const switched = signal<string | undefined>(undefined);
  /** The active account, when it has a key in this vault. */
  const account = computed(() => {
    const s = status.value;
    return s?.accounts.find((a) => a.address === s.activeAccount);
  });

  /** Reads the status; resolves to it. */
  async function refresh(): Promise<Status> {
    const s = await call('vault.status', {});
    status.value = s;
    return s;
  }
  /** Locks the vault, then reads the status. */
  async function lock(): Promise<void> {
    await call('vault.lock', {});
    await refresh();
  }
  /** Makes `address` the active account (the person's explicit action), then reads the status. */
  async function select(address: string): Promise<void> {
    try {
      const r = await call('account.select', { address });
      if (r.changed) switched.value = switchedText(status.value?.accounts ?? [], address);
    } catch (err) {
      switched.value = messageOf(err);
    }
    await refresh();
  }
  return { status, switched, account, refresh, lock, select };
}
