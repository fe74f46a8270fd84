/**
 * The deposit-wallet panel's state: the active account's deposit wallet (shown only once the
 * background derived it through the chain RPC and the relayer answered `/deployed`), the relayer
 * transaction in flight with its progress (NEW → EXECUTED → MINED, or FAILED / INVALID with the
 * relayer's reason — nothing is resubmitted; a transaction submitted from a popup since closed is shown
 * again from the background's memory, `resume`), and the wallet's redeemable positions. Actions: set up
 * (derive), create, approve (the setup batch, decided in the approval window), redeem, withdraw (bridge).
 */
import { computed, signal } from '@preact/signals';
import type { ProcedureOutput } from '../../../lib/messaging/protocol';
import { InvalidFieldError } from '../../../lib/validation';
import { messageOf } from '../api';
import type { Call } from './perps';

/** `clob.depositWallet.status` as the panel reads it. */
export type DepositStatus = ProcedureOutput<'clob.depositWallet.status'>;
/** The relayer transaction the panel follows: what it does (`label`) and its last known row. */
export type TrackedTx = {
  label: string;
  transactionID: string;
  state: string;
  transactionHash: string;
  error?: string;
};

const STEPS = ['STATE_NEW', 'STATE_EXECUTED', 'STATE_MINED'];

/** Progress of a relayer state: step 1-3 of 3 (CONFIRMED counts as mined), 0 for FAILED / INVALID. */
export function txProgress(state: string): number {
  if (state === 'STATE_CONFIRMED') return 3;
  return STEPS.indexOf(state) + 1;
}

/** A relayer state in plain words. */
export function txStateText(tx: Pick<TrackedTx, 'state' | 'error'>): string {
  switch (tx.state) {
    case 'STATE_NEW':
      return 'Submitted to the relayer';
    case 'STATE_EXECUTED':
      return 'Sent to the chain, waiting to be mined';
    case 'STATE_MINED':
    case 'STATE_CONFIRMED':
      return 'Mined';
    case 'STATE_FAILED':
      return `Failed when mined${tx.error ? `: ${tx.error}` : ''}. Nothing was retried.`;
    default:
      return `Refused by the relayer${tx.error ? `: ${tx.error}` : ''}. Nothing was retried.`;
  }
}

/** Whether a relayer transaction is still on its way (NEW or EXECUTED). */
const inFlight = (state: string) => state === 'STATE_NEW' || state === 'STATE_EXECUTED';

/** The deposit-wallet store. */
export type DepositStore = ReturnType<typeof createDepositStore>;

/**
 * Creates the store for `account` over `call`; `o.pollMs` between status reads while a transaction is in flight
 * (default 1000).
 */
export function createDepositStore(
  call: Call,
  account: string,
  o: { pollMs?: number; sleep?: (ms: number) => Promise<void> } = {},
) {
  const status = signal<DepositStatus | undefined>(undefined);
  const tx = signal<TrackedTx | undefined>(undefined);
  const busy = signal(false);
  const error = signal<string | undefined>(undefined);
  const wallet = computed(() => status.value?.wallet ?? null);
  const sleep = o.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));

  async function run(fn: () => Promise<void>): Promise<void> {
    busy.value = true;
    error.value = undefined;
    try {
      await fn();
    } catch (err) {
      error.value = messageOf(err);
    } finally {
      busy.value = false;
    }
  }
  /**
   * Reads the wallet and the followed transaction. With none followed (a popup just opened), the
   * background's remembered ones (`pending`): the latest still in flight, else the latest that landed.
   */
  async function load(): Promise<void> {
    const t = tx.value;
    const s = await call('clob.depositWallet.status', { account, ...(t ? { transactionID: t.transactionID } : {}) });
    status.value = s;
    if (t && s.transaction) tx.value = { label: t.label, ...s.transaction };
    else if (!t && s.pending?.length)
      tx.value = [...s.pending].reverse().find((p) => inFlight(p.state)) ?? s.pending[s.pending.length - 1];
  }
  /** Reads the wallet; a remembered transaction still in flight is followed again until it lands. */
  async function resume(): Promise<void> {
    await load();
    const t = tx.value;
    if (t && inFlight(t.state)) await follow(t.label, t);
  }
  /** Follows `id` until mined, failed or refused (a poll every `pollMs`). */
  async function follow(label: string, sub: { transactionID: string; state: string }): Promise<void> {
    tx.value = { label, transactionID: sub.transactionID, state: sub.state, transactionHash: '' };
    for (;;) {
      await load();
      if (!inFlight(tx.value?.state ?? '')) return;
      await sleep(o.pollMs ?? 1000);
    }
  }
  return {
    status,
    wallet,
    tx,
    busy,
    error,
    load: () => run(load),
    /**
     * What a popup does when it opens: reads the wallet and follows again, until mined or failed, the
     * relayer transaction the background remembers (submitted from a popup since closed).
     */
    resume: () => run(resume),
    /**
     * Derives the wallet (chain RPC + `/deployed`) and sets up the API key and builder credentials;
     * `replace` true only when the person confirmed switching an account's type 0-2 credentials to the
     * wallet (the background refuses the switch otherwise).
     */
    setUp: (replace = false) =>
      run(async () => {
        await call('clob.depositWallet.derive', { account, ...(replace ? { replaceCredentials: true } : {}) });
        await load();
      }),
    /** Creates the wallet through the relayer and follows the transaction until mined. */
    create: () =>
      run(async () => {
        const r = await call('clob.depositWallet.create', { account });
        if (r.transaction) await follow('Creating the deposit wallet', r.transaction);
        else await load();
      }),
    /** The setup approvals (collateral and outcome tokens for the exchanges), decided in the approval window. */
    approve: () =>
      run(async () =>
        follow('Approving the exchanges', await call('clob.walletBatch', { account, batch: { kind: 'setup' } })),
      ),
    /**
     * A bridge withdraw from the wallet (`amount` USDC, destination chain id, token, recipient), decided in
     * the approval window; followed until mined, and a failure is shown with its reason — never resubmitted.
     */
    withdraw: (w: { amount: string; toChainId: string; toTokenAddress: string; recipient: string }) =>
      run(async () => {
        const toChainId = Number(w.toChainId);
        if (!/^\d{1,15}$/.test(w.toChainId) || toChainId <= 0)
          throw new InvalidFieldError({ field: 'destination chain id', reason: 'a positive whole number' });
        const r = await call('clob.walletBatch', {
          account,
          batch: {
            kind: 'withdraw',
            amount: w.amount,
            toChainId,
            toTokenAddress: w.toTokenAddress,
            recipient: w.recipient,
          },
        });
        await follow(`Withdrawing ${w.amount} USDC`, r);
      }),
    /** Redeems a resolved market's positions into the wallet (one approval, one batch). */
    redeem: (conditionId: string) =>
      run(async () =>
        follow('Redeeming', await call('clob.walletBatch', { account, batch: { kind: 'redeem', conditionId } })),
      ),
  };
}
