/**
 * The steps the deposit-wallet handlers (./deposit.ts, ./deposit-batch.ts) share: the relayer and the chain
 * of the current settings, the stored wallet re-derived before each use, a signed relayer request's answer
 * audited (the relayer's refusal as `error`, anything else once the request left as `unknown`), and a
 * submitted transaction remembered for `status`.
 */
import type { Address } from 'viem';
import { appendAudit } from '../../audit';
import { BaseError } from '../../errors/base';
import { walletHasCode } from '../../relayer/chain';
import { RelayerRequestError, RelayerTransactionFailedError, relayerClient } from '../../relayer/client';
import { rememberRelayerTx } from '../../relayer/pending';
import { beaconDepositWallet, uupsDepositWallet } from '../../relayer/wallet';
import { readSettings } from '../../settings';
import { OutcomeUnknownError } from '../../signer/service';
import type { DepositWalletInfo } from '../../vault/vault';
import { auditOf, type ProcedureDeps } from './deps';

/**
 * The shared steps over `d`: `env()` the settings, the gateway's fetch, the relayer client and `deployed(wallet)`;
 * `stored(account, chainId)` the stored wallet; `submitted(sending, audit, what)` a relayer request's answer;
 * `remembered(account, transactionID, label)`. Each throws as its docstring says.
 */
export function depositSteps(d: ProcedureDeps) {
  const { vault, db, service } = d;
  const env = async () => {
    const s = await readSettings(db);
    const fetchFn = service.gatewayFetch();
    const relayer = relayerClient(s.relayerUrl, fetchFn);
    // Deployed only when the relayer and the chain agree (code at the address), never on the relayer's word alone.
    const deployed = async (wallet: Address) =>
      (await relayer.deployed(wallet)) && (await walletHasCode(s.rpcUrl, wallet, s.clobChainId, fetchFn));
    return { s, fetchFn, relayer, deployed };
  };
  /**
   * The stored wallet of `account`, re-derived (PROTOCOL.md §4.2); `NoDepositWalletError` when none or it does not
   * match.
   */
  const stored = async (account: string, chainId: number): Promise<DepositWalletInfo> => {
    const w = await vault.depositWallet(account);
    if (!w) throw new NoDepositWalletError();
    const derived =
      w.kind === 'uups' ? uupsDepositWallet(w.account, chainId) : beaconDepositWallet(w.account, chainId, w.beacon);
    if (derived.toLowerCase() !== w.wallet.toLowerCase()) throw new NoDepositWalletError();
    return w;
  };
  /**
   * A signed relayer request's answer: the relayer's own refusal (a 4xx answer, or INVALID) is
   * audited `error` and thrown as is; anything else once the request left — no answer, a malformed one —
   * means the relayer may run it: audited `unknown` and thrown as `OutcomeUnknownError` (-32002), so
   * nobody is told it failed and runs it again (nothing is resubmitted without the person).
   */
  const submitted = async <T>(
    sending: Promise<T>,
    audit: { at: number; origin: string; account: string; kind: string; summary: string; digest?: string },
    what: string,
  ): Promise<T> => {
    try {
      return await sending;
    } catch (err) {
      const refused =
        (err instanceof RelayerRequestError && err.status < 500) || err instanceof RelayerTransactionFailedError;
      await appendAudit(auditOf(d), {
        ...audit,
        result: refused ? 'error' : 'unknown',
        detail: err instanceof BaseError ? err.shortMessage : 'error',
      });
      if (refused) throw err;
      throw new OutcomeUnknownError(what, err, { command: audit.kind }, 'No readable answer from the relayer');
    }
  };
  /** Remembers a submitted transaction for `status` (best effort: the submission already happened). */
  const remembered = (account: string, transactionID: string, label: string) =>
    rememberRelayerTx(db, { account, transactionID, label, at: Date.now() }).catch(() => undefined);
  return { env, stored, submitted, remembered };
}

/** The deposit-wallet handlers' shared steps (`depositSteps`). */
export type DepositSteps = ReturnType<typeof depositSteps>;

/**
 * The active account has no deposit wallet set up (or its stored address no longer matches the derivation): derive it
 * first.
 */
export class NoDepositWalletError extends BaseError {
  override name = 'Relayer.NoDepositWalletError';
  static override readonly code = 4100;
  constructor() {
    super('This account has no deposit wallet set up yet. Set it up in the deposit wallet panel first.');
  }
}
