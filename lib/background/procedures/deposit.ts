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
 *
 * Here derive, create and status; the batch handler is in ./deposit-batch.ts, the steps they share in
 * ./deposit-steps.ts, the status's reads at the venues in ./deposit-wallet-reads.ts.
 */
import * as v from 'valibot';
import { requireActiveAccount } from '../../accounts';
import { appendAudit } from '../../audit';
import { clobL2Request } from '../../clob/client';
import type { DEPOSIT_CONTRACT } from '../../messaging/deposit';
import { walletCreateRequest } from '../../relayer/batch';
import { readDepositWallet } from '../../relayer/chain';
import type { RelayerTransaction } from '../../relayer/client';
import { forgetRelayerTxs, pendingRelayerTxs } from '../../relayer/pending';
import { InvalidFieldError } from '../../validation';
import { assertVenueUsable } from '../../settings/confirmation';
import { PERSON_SCOPES } from '../../authority/epoch';
import { auditOf, type ContractHandlers, type ProcedureDeps } from './deps';
import { depositSteps } from './deposit-steps';
import { walletBatchHandler } from './deposit-batch';
import { venueApprovals, walletPositions } from './deposit-wallet-reads';

const builderAnswer = v.object({
  key: v.pipe(v.string(), v.minLength(1), v.maxLength(200)),
  secret: v.pipe(v.string(), v.minLength(1), v.maxLength(200)),
  passphrase: v.pipe(v.string(), v.minLength(1), v.maxLength(200)),
});

/** Derive, create, status and batch (see the module docstring). */
export function depositProcedures(d: ProcedureDeps): ContractHandlers<typeof DEPOSIT_CONTRACT> {
  const { vault, db, service } = d;
  const steps = depositSteps(d);
  const { env, stored, submitted, remembered } = steps;
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
        ? await venueApprovals(s.clobChainId, positions.heldToken, (path) => service.clobRead(account, path))
        : 'missing';
      return {
        wallet: { wallet: checked.wallet, kind: checked.kind, deployed, approvals },
        redeemable: positions.redeemable,
        ...extra,
      };
    },
    'clob.walletBatch': walletBatchHandler(d, steps),
  };
}

/** The relayer states after which a transaction no longer changes (reported once, then forgotten). */
const LANDED: ReadonlySet<string> = new Set(['STATE_MINED', 'STATE_CONFIRMED', 'STATE_FAILED', 'STATE_INVALID']);

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
