/**
 * Handlers of the deposit-wallet procedures (contract: lib/messaging/deposit.ts; PROTOCOL.md §4).
 * The active account only. The address comes from the chain RPC setting (`rpcUrl`) and is shown only
 * after the relayer answered `/deployed` for it; a stored wallet is re-derived before each use. A batch
 * is decoded (`describeWalletCalls`: undecodable calls and foreign spenders refused before any window),
 * shown in plain words in the approval window bound to its EIP-712 digest, never grantable, and signed
 * only after the person approved that digest; a FAILED / INVALID answer is surfaced with its reason and
 * nothing is resubmitted. Submitted relayer transactions are remembered (`lib/relayer/pending.ts`) and
 * `status` reads them again until they land, so their progress survives the popup closing.
 *
 * Every procedure that signs or submits holds the person's authority from its start (`PERSON_SCOPES`)
 * and goes through the signing service's one guard: the owner key of ClobAuth and of a batch is
 * `SigningService.ownerKey` (the panic gate and the authority checked right before each signature), and
 * `check` runs again right before each relayer submit.
 */
import * as v from 'valibot';
import { hashTypedData, type Address } from 'viem';
import { activeAccount, requireActiveAccount } from '../../accounts';
import { appendAudit } from '../../audit';
import type { ApiCredentials } from '../../clob/auth';
import { clobL2Request } from '../../clob/client';
import { BaseError } from '../../errors/base';
import { requestJson } from '../../http/json';
import type { DEPOSIT_CONTRACT } from '../../messaging/deposit';
import { signWalletBatch, walletBatchTypedData, walletCreateRequest, type WalletCall } from '../../relayer/batch';
import { redeemCalls, setupCalls } from '../../relayer/calls';
import { readDepositWallet, walletHasCode } from '../../relayer/chain';
import {
  DepositWalletNotDeployedError,
  RelayerRequestError,
  RelayerTransactionFailedError,
  relayerClient,
  type RelayerTransaction,
} from '../../relayer/client';
import { venueContracts } from '../../relayer/contracts';
import { describeWalletCalls } from '../../relayer/decode';
import { forgetRelayerTxs, pendingRelayerTxs, rememberRelayerTx } from '../../relayer/pending';
import { bridgeDepositAddress, bridgeTransferCall } from '../../relayer/bridge';
import { toUnits } from '../../decimal';
import { InvalidFieldError } from '../../validation';
import { beaconDepositWallet, uupsDepositWallet } from '../../relayer/wallet';
import { readSettings, type Settings } from '../../settings';
import { assertVenueUsable } from '../../settings/confirmation';
import { OutcomeUnknownError } from '../../signer/service';
import { PERSON_SCOPES } from '../../authority/epoch';
import { POPUP_ORIGIN } from '../../authority/person';
import { userRejected } from '../../errors/rpc';
import type { DepositWalletInfo } from '../../vault/vault';
import { auditOf, type ContractHandlers, type ProcedureDeps } from './deps';

/** How long the approval window waits for a decision on a batch (ms). */
const BATCH_TTL_MS = 300_000;
/** A batch's deadline after it is built (s): the relayer refuses it afterwards. */
const BATCH_DEADLINE_S = 900;

const builderAnswer = v.object({
  key: v.pipe(v.string(), v.minLength(1), v.maxLength(200)),
  secret: v.pipe(v.string(), v.minLength(1), v.maxLength(200)),
  passphrase: v.pipe(v.string(), v.minLength(1), v.maxLength(200)),
});

/** Derive, create, status and batch (see the module docstring). */
export function depositProcedures(d: ProcedureDeps): ContractHandlers<typeof DEPOSIT_CONTRACT> {
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
  return {
    'clob.depositWallet.derive': async ({ account, replaceCredentials }) => {
      // The person's set-up holds the authority of its start: checked before each signature and each request that
      // creates a key.
      const authority = service.authority.capture(PERSON_SCOPES);
      await requireActiveAccount(db, vault, account);
      // An existing account (types 0-2) keeps its credentials unless the person confirmed the switch.
      const existing = await vault.clobSignatureType(account);
      if (existing !== undefined && existing !== 3 && replaceCredentials !== true)
        throw new ReplacesCredentialsError(existing);
      const owner = await vault.ownerAccount(account);
      const { s, fetchFn, deployed: isDeployed } = await env();
      // it signs (ClobAuth for the API and builder keys) on a real-money venue only once confirmed
      assertVenueUsable(s, service.transportRule);
      const chain = await readDepositWallet(s.rpcUrl, owner.address, s.clobChainId, fetchFn);
      const deployed = await isDeployed(chain.address);
      await service.clobCreateOrDerive(account, { authority });
      const api = await vault.clobCredentials(account);
      const check = service.ownerCheck(authority); // the panic gate and the authority
      check(); // nothing is stored or created after an end
      await vault.putClobCredentials({
        account,
        apiKey: api.apiKey,
        secret: api.secret,
        passphrase: api.passphrase,
        nonce: api.info.nonce,
        signatureType: 3,
        funder: chain.address,
      });
      const previous = await vault.depositWallet(account);
      const reused = previous?.wallet.toLowerCase() === chain.address.toLowerCase();
      check(); // and no builder key is created after one
      const builder = reused
        ? await vault.builderCredentials(account)
        : v.parse(
            builderAnswer,
            await clobL2Request(
              s.clobUrl,
              {
                address: owner.address,
                credentials: api,
                method: 'POST',
                requestPath: '/auth/builder-api-key',
                timestamp: Math.floor(Date.now() / 1000),
              },
              fetchFn,
            ),
          );
      await vault.putDepositWallet({
        account: owner.address,
        wallet: chain.address,
        kind: chain.kind,
        beacon: chain.beacon,
        builder: { key: builder.key, secret: builder.secret, passphrase: builder.passphrase },
      });
      if (existing !== undefined && existing !== 3) {
        await appendAudit(auditOf(d), {
          at: Date.now(),
          origin: 'extension',
          account: owner.address,
          kind: 'clob.credentials.switch',
          summary:
            `order-book orders switched from signature type ${existing} to the ` +
            `deposit wallet ${chain.address} (type 3), confirmed by the person`,
          result: 'ok',
        });
      }
      return { wallet: chain.address, kind: chain.kind, deployed };
    },
    'clob.depositWallet.create': async ({ account }) => {
      // The authority of the person's action from its start, with the panic gate: checked right before the creation is
      // submitted.
      const check = service.ownerCheck(service.authority.capture(PERSON_SCOPES));
      await requireActiveAccount(db, vault, account);
      const { s, relayer, deployed: isDeployed } = await env();
      assertVenueUsable(s, service.transportRule);
      const w = await stored(account, s.clobChainId);
      if (await isDeployed(w.wallet)) return { deployed: true };
      const audit = {
        at: Date.now(),
        origin: 'extension',
        account: w.account,
        kind: 'relayer.walletCreate',
        summary: `create deposit wallet ${w.wallet}`,
      };
      const builder = await vault.builderCredentials(account);
      check(); // a lock, panic, switch or venue change during the reads: nothing is submitted
      const transaction = await submitted(
        relayer.submit(walletCreateRequest(w.account, s.clobChainId), builder),
        audit,
        'deposit-wallet creation',
      );
      await remembered(w.account, transaction.transactionID, 'Creating the deposit wallet');
      await appendAudit(auditOf(d), { ...audit, result: 'ok' });
      return { deployed: false, transaction };
    },
    'clob.depositWallet.status': async ({ account, transactionID }) => {
      const { s, fetchFn, relayer, deployed: isDeployed } = await env();
      const w = await vault.depositWallet(account);
      const transaction = transactionID === undefined ? undefined : await relayer.transaction(transactionID);
      const viewOf = (t: RelayerTransaction) => ({
        transactionID: t.transactionID,
        state: t.state,
        transactionHash: t.transactionHash,
        ...(t.errorMsg ? { error: t.errorMsg } : {}),
      });
      const view = transaction && viewOf(transaction);
      // The transactions submitted before (the popup that followed them may have closed), each read again.
      const now = Date.now();
      const pending = [];
      const landed = transaction && LANDED.has(transaction.state) ? [transaction.transactionID] : [];
      for (const p of await pendingRelayerTxs(db, account, now)) {
        const t =
          p.transactionID === transaction?.transactionID
            ? transaction
            : await relayer.transaction(p.transactionID).catch(() => undefined);
        if (!t) continue;
        pending.push({ label: p.label, ...viewOf(t) });
        if (LANDED.has(t.state)) landed.push(t.transactionID);
      }
      if (landed.length) await forgetRelayerTxs(db, landed, now);
      const extra = { ...(view ? { transaction: view } : {}), ...(pending.length ? { pending } : {}) };
      if (!w) return { wallet: null, redeemable: [], ...extra };
      const checked = await stored(account, s.clobChainId);
      const deployed = await isDeployed(checked.wallet);
      const positions = deployed
        ? await walletPositions(s.dataUrl, checked.wallet, fetchFn)
        : { redeemable: [], heldToken: undefined };
      const approvals = deployed
        ? await venueApprovals(
            s.clobUrl,
            s.clobChainId,
            account,
            positions.heldToken,
            () => vault.clobCredentials(account),
            fetchFn,
          )
        : 'missing';
      return {
        wallet: { wallet: checked.wallet, kind: checked.kind, deployed, approvals },
        redeemable: positions.redeemable,
        ...extra,
      };
    },
    'clob.walletBatch': async ({ account, batch }) => {
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
    },
  };
}

/** The relayer states after which a transaction no longer changes (reported once, then forgotten). */
const LANDED: ReadonlySet<string> = new Set(['STATE_MINED', 'STATE_CONFIRMED', 'STATE_FAILED', 'STATE_INVALID']);

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

const positionsSchema = v.object({
  data: v.pipe(
    v.array(
      v.looseObject({
        condition_id: v.pipe(v.string(), v.regex(/^0x[0-9a-fA-F]{64}$/)),
        token_id: v.optional(v.pipe(v.string(), v.regex(/^\d{1,80}$/))),
        title: v.pipe(v.string(), v.maxLength(300)),
        outcome: v.pipe(v.string(), v.maxLength(60)),
        current_size: v.pipe(v.string(), v.maxLength(64)),
        redeemable: v.boolean(),
      }),
    ),
    v.maxLength(500),
  ),
});

/**
 * The deposit wallet's positions (data v2 `GET /v2/positions?user=<wallet>`): the redeemable ones, and the
 * token id of one it holds, unresolved (`heldToken`, for the outcome-token approval check); none when
 * the data service does not answer in shape.
 */
async function walletPositions(
  dataUrl: string,
  wallet: string,
  fetchFn: typeof fetch,
): Promise<{
  redeemable: { conditionId: string; title: string; outcome: string; size: string }[];
  heldToken: string | undefined;
}> {
  const answer = await requestJson(
    `${dataUrl}/v2/positions?user=${wallet}&limit=100`,
    { method: 'GET' },
    fetchFn,
  ).catch(() => undefined);
  const p = v.safeParse(positionsSchema, answer?.body);
  if (!p.success) return { redeemable: [], heldToken: undefined };
  const held = p.output.data.filter((r) => r.current_size !== '0' && !/^0(\.0*)?$/.test(r.current_size));
  return {
    redeemable: held
      .filter((r) => r.redeemable)
      .map((r) => ({ conditionId: r.condition_id, title: r.title, outcome: r.outcome, size: r.current_size })),
    heldToken: held.find((r) => !r.redeemable && r.token_id !== undefined)?.token_id,
  };
}

const allowanceSchema = v.object({
  allowances: v.record(v.pipe(v.string(), v.maxLength(64)), v.pipe(v.string(), v.regex(/^\d{1,80}$/))),
});

/**
 * Whether the deposit wallet approved the exchanges, as the venue reads it: the order book's
 * `GET /balance-allowance?asset_type=COLLATERAL&signature_type=3` (L2, PROTOCOL.md §4.5 "Balance") lists
 * the wallet's collateral allowance per exchange; when the wallet holds outcome tokens (`heldToken`, one
 * of them), `asset_type=CONDITIONAL&token_id=<it>` lists its outcome-token approval (`setApprovalForAll`
 * on ConditionalTokens, per exchange, the same for every token) — without tokens there is nothing to sell,
 * so that approval is not asked. `approved` when exchange V2 and negative-risk exchange V2 both have every
 * allowance asked; `missing` when one is zero; `unknown` when the venue cannot be asked (no API
 * credentials, vault locked, no answer, another shape).
 */
async function venueApprovals(
  clobUrl: string,
  chainId: number,
  account: Address,
  heldToken: string | undefined,
  creds: () => Promise<ApiCredentials>,
  fetchFn: typeof fetch,
): Promise<'approved' | 'missing' | 'unknown'> {
  try {
    const credentials = await creds();
    const c = venueContracts(chainId);
    const allows = async (query: string): Promise<boolean | undefined> => {
      const answer = await clobL2Request(
        clobUrl,
        { address: account, credentials, method: 'GET', requestPath: `/balance-allowance?${query}&signature_type=3` },
        fetchFn,
      );
      const p = v.safeParse(allowanceSchema, answer);
      if (!p.success) return undefined;
      const of = (spender: string) =>
        BigInt(
          Object.entries(p.output.allowances).find(([k]) => k.toLowerCase() === spender.toLowerCase())?.[1] ?? '0',
        );
      return of(c.exchangeV2) > 0n && of(c.negRiskExchangeV2) > 0n;
    };
    const collateral = await allows('asset_type=COLLATERAL');
    if (collateral !== true) return collateral === undefined ? 'unknown' : 'missing';
    if (heldToken === undefined) return 'approved';
    const outcome = await allows(`asset_type=CONDITIONAL&token_id=${heldToken}`);
    return outcome === undefined ? 'unknown' : outcome ? 'approved' : 'missing';
  } catch {
    return 'unknown';
  }
}

/**
 * A deposit-wallet set-up would replace the account's order-book API credentials of signature type 0, 1
 * or 2 (its orders would then be signed as type 3 and paid from the new, empty wallet): refused unless
 * the request says `replaceCredentials: true`. Nothing was read or stored.
 */
export class ReplacesCredentialsError extends InvalidFieldError {
  override name = 'Relayer.ReplacesCredentialsError';
  constructor(signatureType: 0 | 1 | 2) {
    super({
      field: 'replaceCredentials',
      reason:
        `this account already trades the order book with API credentials of ` +
        `signature type ${signatureType}; a deposit wallet would switch its orders to ` +
        `the wallet (type 3), which starts empty. Confirm the switch to set it up`,
    });
  }
}

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
