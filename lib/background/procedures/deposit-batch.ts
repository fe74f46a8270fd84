/**
 * The `clob.walletBatch` handler (contract: lib/messaging/deposit.ts; PROTOCOL.md §4): an owner-signed batch
 * of the active account's deposit wallet (set-up approvals, a redemption, a bridge withdrawal, decoded
 * calls), decoded (`describeWalletCalls`: undecodable calls and foreign spenders refused before any window),
 * shown in plain words in the approval window bound to its EIP-712 digest, never grantable, signed only after
 * the person approved that digest, and submitted to the relayer.
 */
import { hashTypedData, type Address } from 'viem';
import { activeAccount, requireActiveAccount } from '../../accounts';
import { appendAudit } from '../../audit';
import type { DEPOSIT_CONTRACT } from '../../messaging/deposit';
import { signWalletBatch, walletBatchTypedData, type WalletCall } from '../../relayer/batch';
import { redeemCalls, setupCalls } from '../../relayer/calls';
import { DepositWalletNotDeployedError } from '../../relayer/client';
import { describeWalletCalls } from '../../relayer/decode';
import { bridgeDepositAddress, bridgeTransferCall } from '../../relayer/bridge';
import { toUnits } from '../../decimal';
import { InvalidFieldError } from '../../validation';
import type { Settings } from '../../settings';
import { assertVenueUsable } from '../../settings/confirmation';
import { PERSON_SCOPES } from '../../authority/epoch';
import { POPUP_ORIGIN } from '../../authority/person';
import { userRejected } from '../../errors/rpc';
import { auditOf, type ContractHandlers, type ProcedureDeps } from './deps';
import type { DepositSteps } from './deposit-steps';

/** How long the approval window waits for a decision on a batch (ms). */
const BATCH_TTL_MS = 300_000;
/** A batch's deadline after it is built (s): the relayer refuses it afterwards. */
const BATCH_DEADLINE_S = 900;

/**
 * The handler over `d` and the shared `steps`: resolves to the relayer's answer to the submitted batch. Throws
 * `NoDepositWalletError`, `DepositWalletNotDeployedError`, a user rejection (the window refused, or approved another
 * digest), the signing service's guard errors (lock, panic, authority ended) and the relayer's (see `submitted`).
 */
export function walletBatchHandler(
  d: ProcedureDeps,
  steps: DepositSteps,
): ContractHandlers<typeof DEPOSIT_CONTRACT>['clob.walletBatch'] {
  const { vault, db, service } = d;
  const { env, stored, submitted, remembered } = steps;
  return async ({ account, batch }) => {
    // The authority of the person's action from its start (`lib/authority/epoch.ts`): checked before the signature
    // and before the submit.
    const authority = service.authority.capture(PERSON_SCOPES);
    await requireActiveAccount(db, vault, account);
    const { s, fetchFn, relayer, deployed: isDeployed } = await env();
    // an owner-signed batch moves funds: like an order, only on a confirmed venue
    assertVenueUsable(s, service.transportRule);
    const w = await stored(account, s.clobChainId);
    if (!(await isDeployed(w.wallet))) throw new DepositWalletNotDeployedError(w.wallet);
    const bridged = batch.kind === 'withdraw' ? await bridgeWithdrawCall(s, w.wallet, batch, fetchFn) : undefined;
    const calls: WalletCall[] = bridged
      ? [bridged.call]
      : batch.kind === 'setup'
        ? setupCalls(s.clobChainId)
        : batch.kind === 'redeem'
          ? redeemCalls(s.clobChainId, batch.conditionId)
          : batch.kind === 'calls'
            ? batch.calls
            : [];
    const described = describeWalletCalls(s.clobChainId, w.wallet, calls);
    const walletBatch = {
      chainId: s.clobChainId,
      wallet: w.wallet,
      nonce: await relayer.nonce(w.account),
      deadline: String(Math.floor(Date.now() / 1000) + BATCH_DEADLINE_S),
      calls,
    };
    const digest = hashTypedData(walletBatchTypedData(walletBatch));
    const label = (await activeAccount(db, vault))?.label ?? '';
    d.registry.checkCapacity(POPUP_ORIGIN);
    const { approved } = d.registry.add(
      {
        origin: POPUP_ORIGIN,
        kind: 'relayer',
        title: described.withdrawal
          ? 'Withdraw from your deposit wallet'
          : batch.kind === 'redeem'
            ? 'Redeem resolved positions'
            : 'Deposit-wallet approvals',
        lines: [
          ...described.calls.map((c) => c.words),
          ...(bridged ? [bridged.words] : []),
          `Deposit wallet ${w.wallet}, relayer nonce ${walletBatch.nonce}`,
        ],
        flags: [
          ...(described.withdrawal
            ? ['Moves tokens out of the deposit wallet (a withdrawal): always asked, never covered by a grant.']
            : []),
          ...(bridged
            ? [
                'The bridge chose the deposit address; Countersign ' +
                  'cannot check where the bridge sends the funds after it.',
              ]
            : []),
        ],
        signer: 'owner key',
        digest,
        account: { address: w.account, label },
        grantable: false,
      },
      BATCH_TTL_MS,
    );
    await d.showApprovals?.();
    const view = await approved;
    if (view.digest !== digest) throw userRejected('The approved batch is not the one built; nothing was signed.');
    // The guarded owner key (venue confirmed again after the window): a lock, panic, switch or venue change
    // while the window was open signs nothing, and nothing is submitted after one.
    const { owner, check } = await service.ownerKey(account, authority);
    const request = await signWalletBatch(owner, walletBatch);
    const audit = {
      at: Date.now(),
      origin: 'extension',
      account: w.account,
      kind: 'relayer.walletBatch',
      summary: described.calls
        .map((c) => c.words)
        .join('; ')
        .slice(0, 500),
      digest,
    };
    const builder = await vault.builderCredentials(account);
    check();
    const answer = await submitted(relayer.submit(request, builder), audit, 'batch');
    await remembered(w.account, answer.transactionID, batchLabel(batch));
    await appendAudit(auditOf(d), { ...audit, result: 'ok' });
    return answer;
  };
}

/** What a batch does, in the words the popup shows above its progress. */
function batchLabel(batch: { kind: 'setup' | 'redeem' | 'calls' | 'withdraw'; amount?: string }): string {
  if (batch.kind === 'setup') return 'Approving the exchanges';
  if (batch.kind === 'redeem') return 'Redeeming';
  if (batch.kind === 'withdraw') return `Withdrawing ${batch.amount ?? ''} USDC`;
  return 'Deposit-wallet batch';
}

/**
 * The call of a bridge withdraw (lib/relayer/bridge.ts): the bridge's deposit address for `w`, and the
 * collateral `transfer` to it of `amount` USDC (6 decimals), with the sentence naming where it goes.
 * The bridge is the `bridgeUrl` setting (filled per venue preset). Throws `Relayer.BridgeRefusedError`, `NetworkError`,
 * `InvalidFieldError` (`amount`).
 */
async function bridgeWithdrawCall(
  s: Settings,
  wallet: Address,
  w: { amount: string; toChainId: number; toTokenAddress: Address; recipient: Address },
  fetchFn: typeof fetch,
) {
  const units = toUnits(w.amount, 6);
  if (units === undefined || units <= 0n)
    throw new InvalidFieldError({ field: 'amount', reason: 'a positive USDC amount with at most 6 decimals' });
  const deposit = await bridgeDepositAddress(s.bridgeUrl, wallet, w, fetchFn);
  return {
    call: bridgeTransferCall(s.clobChainId, deposit, units),
    words:
      `Through the bridge: ${deposit} is the bridge's deposit address; it sends the ` +
      `USDC to ${w.recipient} on chain ${w.toChainId}, as token ${w.toTokenAddress}`,
  };
}
