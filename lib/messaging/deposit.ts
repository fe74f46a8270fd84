/**
 * Contract of the deposit-wallet procedures (PROTOCOL.md §4): derive the active owner key's
 * deposit wallet (through the chain RPC setting, checked against the relayer's `/deployed`), create it
 * through the relayer, read its state and a relayer transaction's, and run a deposit-wallet batch
 * (setup approvals, a redeem, or given calls) that the person approves in the approval window, decoded
 * in plain words. Popup only. Replies carry addresses and relayer states — never builder or API secrets.
 */
import * as v from 'valibot';
import { address, bytes32, positiveDecimalString, positiveSafeInteger } from '../validation';
import { MAX_BATCH_CALLS } from '../relayer/batch';
import { POPUP, procedure } from './procedure';

const wallet = v.object({ wallet: v.string(), kind: v.picklist(['uups', 'beacon']), deployed: v.boolean() });
/**
 * The wallet as `status` reads it: also whether it approved the exchanges, read from the venue
 * (`balance-allowance` with `signature_type=3`): `approved`, `missing` (not deployed, or an allowance is
 * zero), or `unknown` (the venue could not be asked: no API credentials, vault locked, no answer).
 */
const walletStatus = v.object({ ...wallet.entries, approvals: v.picklist(['approved', 'missing', 'unknown']) });
const states = v.picklist([
  'STATE_NEW',
  'STATE_EXECUTED',
  'STATE_MINED',
  'STATE_CONFIRMED',
  'STATE_FAILED',
  'STATE_INVALID',
]);
const submitted = v.object({ transactionID: v.string(), state: states });
const call = v.strictObject({
  target: address,
  value: v.pipe(v.string(), v.regex(/^\d{1,78}$/)),
  data: v.pipe(
    v.string(),
    v.regex(/^0x(?:[0-9a-fA-F]{2}){0,4096}$/),
    v.transform((s): `0x${string}` => `0x${s.slice(2)}`),
  ),
});

/**
 * What a batch does: `setup` (collateral `approve` and outcome-token `setApprovalForAll` for both V2
 * exchanges, PROTOCOL.md §4.4), `redeem` (ConditionalTokens `redeemPositions` of both outcomes of
 * `conditionId`, §4.6), `calls` as given (decoded before anything else; undecodable → refused), or
 * `withdraw`: `amount` USDC (decimal, at most 6 decimals) from the deposit wallet through the bridge to
 * `recipient` on `toChainId` as `toTokenAddress` (lib/relayer/bridge.ts; a withdrawal, never grantable).
 */
const batchSchema = v.variant('kind', [
  v.strictObject({ kind: v.literal('setup') }),
  v.strictObject({ kind: v.literal('redeem'), conditionId: bytes32 }),
  v.strictObject({
    kind: v.literal('calls'),
    calls: v.pipe(v.array(call), v.minLength(1), v.maxLength(MAX_BATCH_CALLS)),
  }),
  v.strictObject({
    kind: v.literal('withdraw'),
    amount: positiveDecimalString,
    toChainId: positiveSafeInteger,
    toTokenAddress: address,
    recipient: address,
  }),
]);

/** Deposit-wallet procedures. */
export const DEPOSIT_CONTRACT = {
  /**
   * Reads the deposit wallet of `account` (the active one) from the chain RPC, checks `/deployed`, sets
   * up the API key (type 3, funder = the wallet) and builder credentials, and stores them in the vault.
   * An account whose stored API credentials are of type 0, 1 or 2 keeps them unless `replaceCredentials`
   * is `true` (the person confirmed that its orders switch to the deposit wallet): otherwise
   * `Relayer.ReplacesCredentialsError` (field `replaceCredentials`) before anything is read or stored.
   * Throws `Relayer.ChainRpcUnavailableError` (no address is derived then), `VaultLockedError`.
   */
  'clob.depositWallet.derive': procedure({
    input: v.strictObject({ account: address, replaceCredentials: v.optional(v.boolean()) }),
    output: wallet,
    senders: POPUP,
    activity: true,
  }),
  /** Submits the wallet's `WALLET-CREATE` (unless it is deployed): the relayer transaction (poll it with `status`). */
  'clob.depositWallet.create': procedure({
    input: v.strictObject({ account: address }),
    output: v.object({ deployed: v.boolean(), transaction: v.optional(submitted) }),
    senders: POPUP,
    activity: true,
  }),
  /**
   * The stored wallet re-checked against its derivation (PROTOCOL.md §4.2) and the relayer's `/deployed`,
   * whether it approved the exchanges (`approvals`, the venue's read), its redeemable positions, given `transactionID`
   * that relayer transaction (state, hash, the relayer's reason when it failed), and the account's remembered relayer
   * transactions (`pending`).
   */
  'clob.depositWallet.status': procedure({
    input: v.strictObject({ account: address, transactionID: v.optional(v.pipe(v.string(), v.maxLength(100))) }),
    output: v.object({
      wallet: v.nullable(walletStatus),
      /**
       * The wallet's resolved positions it can redeem (data v2 `redeemable`): condition, title, outcome, size (shares).
       */
      redeemable: v.array(
        v.object({ conditionId: v.string(), title: v.string(), outcome: v.string(), size: v.string() }),
      ),
      transaction: v.optional(
        v.object({
          transactionID: v.string(),
          state: states,
          transactionHash: v.string(),
          error: v.optional(v.string()),
        }),
      ),
      /**
       * The relayer transactions submitted for this account and not yet seen land, read again now (absent
       * when none): what each does (`label`), its state, hash and failure reason. One that landed (MINED,
       * CONFIRMED, FAILED, INVALID) is listed once, then forgotten (lib/relayer/pending.ts).
       */
      pending: v.optional(
        v.array(
          v.object({
            label: v.string(),
            transactionID: v.string(),
            state: states,
            transactionHash: v.string(),
            error: v.optional(v.string()),
          }),
        ),
      ),
    }),
    senders: POPUP,
    activity: false,
  }),
  /**
   * Runs a batch (see `batchSchema`) after the person approved it in the approval window (never grantable); the relayer
   * transaction.
   */
  'clob.walletBatch': procedure({
    input: v.strictObject({ account: address, batch: batchSchema }),
    output: submitted,
    senders: POPUP,
    activity: true,
  }),
} as const;
