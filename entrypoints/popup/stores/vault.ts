/**
 * The vault's status for the popup: lock state, owner keys and the active account,
 * pending approvals and the trading session; switching the active account (with the notice of what the
 * switch cancelled) and locking. The popup root chooses its screen from `status`.
 */
import { computed, signal } from '@preact/signals';
import { call as popupCall, messageOf, readStartHint, writeStartHint, type Account, type Status } from '../api';
import type { Call } from './perps';

/** A live proxy key (expiry in the future, Unix ms) of `account`. */
export const hasLiveProxy = (account: Pick<Account, 'proxies'> | undefined, now = Date.now()) =>
  !!account?.proxies.some((p) => p.expiry > now);

/** The notice after switching to `address`: the account's label (or address) and what the switch did. */
export const switchedText = (accounts: readonly Pick<Account, 'address' | 'label'>[], address: string) =>
  `Now acting as ${accounts.find((x) => x.address === address)?.label || address}. ` +
  `Pending site requests were cancelled and connected sites were told.`;

/** The vault store. */
export type VaultStore = ReturnType<typeof createVaultStore>;

/** Where the store keeps the popup's start hint (`api.ts`; tests pass a fake). */
type Hints = { read: typeof readStartHint; write: typeof writeStartHint };
const popupHints: Hints = { read: readStartHint, write: writeStartHint };

/**
 * The popup's first reads (popup open), begun before the first render: `hint`, the start
 * hint with the session epoch (`lib/messaging/start-hint.ts`), and `first`, the status — asked only
 * once the epoch was read, so a hint stored with that epoch can never be older than a lock.
 */
export type VaultBoot = { hint: ReturnType<typeof readStartHint>; first: Promise<Status> };

/** Begins the popup's first reads (`VaultBoot`); call it as early as the page can (`main.tsx`). */
export function bootVault(call: Call = popupCall, hints: Hints = popupHints): VaultBoot {
  const hint = hints.read();
  return { hint, first: hint.then(() => call('vault.status', {})) };
}

/**
 * Creates the store: `start(boot)` shows the start hint's status at once (when one is usable) and then
 * the real status; `refresh()` reads the status. Each status read while unlocked is stored as the next
 * start hint, with the epoch read before it was asked. A read answered after a newer one is dropped.
 */
export function createVaultStore(call: Call = popupCall, hints: Hints = popupHints) {
  const status = signal<Status | undefined>(undefined);
  /** The notice after an account switch (or why it failed). */
  const switched = signal<string | undefined>(undefined);
  /** The active account, when it has a key in this vault. */
  const account = computed(() => {
    const s = status.value;
    return s?.accounts.find((a) => a.address === s.activeAccount);
  });

  let asked = 0;
  let shown = 0;
  /** Shows the status of read number `n` (unless a newer read is shown) and stores it as the start hint. */
  function settle(n: number, s: Status, epoch: string | undefined): Status {
    if (n < shown) return s;
    shown = n;
    status.value = s;
    if (s.unlocked && epoch !== undefined) void hints.write({ epoch, status: s });
    return s;
  }
  /**
   * Starts from the boot reads (`bootVault`): the hint's status while the status is on its way; resolves to the status.
   */
  async function start(boot: VaultBoot): Promise<Status> {
    const n = ++asked;
    const { status: hinted, epoch } = await boot.hint;
    if (hinted && shown === 0) status.value = hinted;
    return settle(n, await boot.first, epoch);
  }
  /** Reads the status; resolves to it. */
  async function refresh(): Promise<Status> {
    const n = ++asked;
    const { epoch } = await hints.read();
    return settle(n, await call('vault.status', {}), epoch);
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
  return { status, switched, account, start, refresh, lock, select };
}
