/**
 * Sandbox relayer `POST /submit` for deposit wallets (PROTOCOL.md §4.4): `WALLET-CREATE` (no signature;
 * the builder key authorises it) and owner-signed `WALLET` batches — signature (EIP-712 `Batch`),
 * relayer nonce and deadline verified, calls decoded by `lib/relayer/decode.ts` (what it cannot decode
 * is refused, as the extension refuses to sign it). A refused request is recorded as `STATE_INVALID`
 * with its reason; a batch whose call fails when mined (a redeem before the market resolved, a transfer
 * beyond the balance) ends `STATE_FAILED` with the reason. Collateral transferred to a bridge deposit
 * address (`POST /bridge/withdraw`) is a bridge withdrawal: recorded in `bridgeWithdrawals` when mined. A mined
 * `WALLET-CREATE` deploys the wallet and credits it demo collateral (`config.newAccountBalance`, standing in for a
 * deposit).
 */
import * as v from 'valibot';
import { encodeAbiParameters, keccak256, recoverTypedDataAddress, toHex, type Address, type Hex } from 'viem';
import { BaseError } from '../../errors/base';
import { walletBatchTypedData, walletCreateRequest, type WalletCall } from '../../relayer/batch';
import { exchangeNameOf, venueContracts } from '../../relayer/contracts';
import { describeWalletCalls, type DescribedCall } from '../../relayer/decode';
import { uupsDepositWallet } from '../../relayer/wallet';
import { address } from '../../validation';
import type { SandboxContext } from '../context';
import type { RelayerChain, RelayerTxRec } from './state';

const hexBytes = v.custom<Hex>((s) => typeof s === 'string' && /^0x(?:[0-9a-fA-F]{2})*$/.test(s));
const createSchema = v.object({
  type: v.literal('WALLET-CREATE'),
  from: address,
  to: address,
  metadata: v.optional(v.string()),
});
const batchSchema = v.object({
  type: v.literal('WALLET'),
  from: address,
  to: address,
  nonce: v.pipe(v.string(), v.regex(/^\d{1,30}$/)),
  signature: v.custom<Hex>((s) => typeof s === 'string' && /^0x[0-9a-fA-F]{130}$/.test(s)),
  metadata: v.optional(v.string()),
  depositWalletParams: v.object({
    depositWallet: address,
    deadline: v.pipe(v.string(), v.regex(/^\d{1,12}$/)),
    calls: v.pipe(
      v.array(v.object({ target: address, value: v.pipe(v.string(), v.regex(/^\d{1,78}$/)), data: hexBytes })),
      v.minLength(1),
      v.maxLength(16),
    ),
  }),
});

/** A `/submit` body the relayer cannot read at all (answered 400 with `message`). */
export class MalformedRelayRequest extends Error {
  override name = 'MalformedRelayRequest';
}

/**
 * Records a deposit-wallet `/submit` body for `builderKey`; returns the row (INVALID when refused). Throws
 * `MalformedRelayRequest`.
 */
export async function submitDepositWallet(
  ctx: SandboxContext,
  body: unknown,
  builderKey: string,
): Promise<RelayerTxRec> {
  const chain = ctx.relayerChain;
  const factory = venueContracts(ctx.config.clobChainId).depositWalletFactory;
  const create = v.safeParse(createSchema, body);
  if (create.success) {
    const tx = walletCreate(ctx, create.output.from, factory, builderKey);
    const expected = walletCreateRequest(create.output.from, ctx.config.clobChainId);
    return record(
      ctx,
      create.output.to.toLowerCase() === expected.to.toLowerCase()
        ? tx
        : { ...tx, outcome: 'invalid', error: 'to must be the deposit wallet factory', effect: () => undefined },
    );
  }
  const batch = v.safeParse(batchSchema, body);
  if (!batch.success)
    throw new MalformedRelayRequest('invalid request: expected a WALLET-CREATE or WALLET deposit-wallet request');
  const b = batch.output;
  const p = b.depositWalletParams;
  const calls: WalletCall[] = p.calls;
  const tx = baseTx(ctx, {
    type: 'WALLET',
    from: b.from,
    to: factory,
    proxyAddress: p.depositWallet,
    nonce: b.nonce,
    builderKey,
    data: encodeCalls(calls),
  });
  const refuse = (why: string) => record(ctx, { ...tx, outcome: 'invalid', error: why });
  if (b.to.toLowerCase() !== factory.toLowerCase()) return refuse('to must be the deposit wallet factory');
  const wallet = chain.wallets.get(p.depositWallet.toLowerCase());
  if (!wallet?.deployed) return refuse('deposit wallet not deployed');
  if (wallet.owner !== b.from.toLowerCase()) return refuse('from is not the owner of the deposit wallet');
  if (b.nonce !== chain.nonceOf(b.from)) return refuse(`invalid nonce: expected ${chain.nonceOf(b.from)}`);
  if (Number(p.deadline) <= Math.floor(ctx.now() / 1000)) return refuse('deadline expired');
  const typed = walletBatchTypedData({
    chainId: ctx.config.clobChainId,
    wallet: p.depositWallet,
    nonce: b.nonce,
    deadline: p.deadline,
    calls,
  });
  const signer = await recoverTypedDataAddress({ ...typed, signature: b.signature }).catch(() => undefined);
  if (signer?.toLowerCase() !== wallet.owner) return refuse('invalid signature');
  let described: DescribedCall[];
  try {
    described = describeWalletCalls(ctx.config.clobChainId, p.depositWallet, calls).calls;
  } catch (err) {
    return refuse(err instanceof BaseError ? err.shortMessage : 'undecodable call');
  }
  chain.nonces.set(wallet.owner, BigInt(b.nonce) + 1n);
  return record(ctx, { ...tx, effect: () => applyCalls(ctx, wallet.address, described) });
}

function walletCreate(ctx: SandboxContext, from: Address, factory: Address, builderKey: string): RelayerTxRec {
  const chain = ctx.relayerChain;
  const wallet = uupsDepositWallet(from, ctx.config.clobChainId);
  const tx = baseTx(ctx, {
    type: 'WALLET-CREATE',
    from,
    to: factory,
    proxyAddress: wallet,
    nonce: '',
    builderKey,
    data: '0x',
  });
  if (chain.wallets.has(wallet.toLowerCase()))
    return { ...tx, outcome: 'invalid', error: 'deposit wallet already deployed' };
  const rec = { address: wallet.toLowerCase(), owner: from.toLowerCase(), deployed: false };
  chain.wallets.set(rec.address, rec);
  return {
    ...tx,
    effect: () => {
      rec.deployed = true;
      ctx.clob.credit(rec.address, ctx.config.newAccountBalance);
      return undefined;
    },
  };
}

function baseTx(
  ctx: SandboxContext,
  t: Pick<RelayerTxRec, 'type' | 'from' | 'to' | 'proxyAddress' | 'nonce' | 'builderKey' | 'data'>,
): RelayerTxRec {
  const id = crypto.randomUUID();
  return {
    ...t,
    id,
    hash: keccak256(toHex(`sandbox-relayer:${id}`)),
    submitted: ctx.now(),
    outcome: 'pending',
    effect: () => undefined,
  };
}

function record(ctx: SandboxContext, tx: RelayerTxRec): RelayerTxRec {
  ctx.relayerChain.txs.push(tx);
  return tx;
}

/** The calls as the wallet's `execute` would receive them (ABI `(address,uint256,bytes)[]`). */
function encodeCalls(calls: readonly WalletCall[]): Hex {
  return encodeAbiParameters(
    [
      {
        type: 'tuple[]',
        components: [
          { name: 'target', type: 'address' },
          { name: 'value', type: 'uint256' },
          { name: 'data', type: 'bytes' },
        ],
      },
    ],
    [calls.map((c) => ({ target: c.target, value: BigInt(c.value), data: c.data }))],
  );
}

/** Runs decoded calls on the chain stand-in, all or nothing; answers a failure reason or undefined. */
function applyCalls(ctx: SandboxContext, wallet: string, calls: readonly DescribedCall[]): string | undefined {
  const failure = calls.map((c) => precheck(ctx, wallet, c)).find((x) => x !== undefined);
  if (failure) return failure;
  for (const c of calls) apply(ctx.relayerChain, ctx, wallet, c);
  return undefined;
}

function precheck(ctx: SandboxContext, wallet: string, c: DescribedCall): string | undefined {
  const venue = ctx.clob;
  if (c.kind === 'redeem') {
    const m = venue.markets.find((x) => x.conditionId.toLowerCase() === c.conditionId.toLowerCase());
    if (!m) return 'condition not prepared';
    if (!ctx.relayerChain.resolutions.has(m.conditionId.toLowerCase())) return 'result for condition not received yet';
  }
  if (c.kind === 'transfer') {
    if (c.ids.length === 0 && venue.balanceOf(wallet) < (c.amounts[0] ?? 0n))
      return 'ERC20: transfer amount exceeds balance';
    if (c.ids.some((id, i) => venue.tokenBalance(wallet, id.toString()) < (c.amounts[i] ?? 0n)))
      return 'ERC1155: insufficient balance for transfer';
  }
  return undefined;
}

function apply(chain: RelayerChain, ctx: SandboxContext, wallet: string, c: DescribedCall): void {
  const venue = ctx.clob;
  switch (c.kind) {
    case 'approve': {
      const m = chain.allowances.get(wallet) ?? new Map();
      m.set(c.spenderName, c.amount);
      chain.allowances.set(wallet, m);
      return;
    }
    case 'setApprovalForAll': {
      const name = exchangeNameOf(ctx.config.clobChainId, c.operator);
      const s = chain.operators.get(wallet) ?? new Set();
      if (name && c.approved) s.add(name);
      else if (name) s.delete(name);
      chain.operators.set(wallet, s);
      return;
    }
    case 'redeem': {
      const m = venue.markets.find((x) => x.conditionId.toLowerCase() === c.conditionId.toLowerCase());
      const winner = m ? chain.resolutions.get(m.conditionId.toLowerCase()) : undefined;
      if (!m || winner === undefined) return;
      m.tokenIds.forEach((tokenId, i) => {
        if (!c.indexSets.some((s) => (s & (1n << BigInt(i))) !== 0n)) return;
        const size = venue.tokenBalance(wallet, tokenId);
        venue.creditToken(wallet, tokenId, -size);
        if (i === winner) venue.credit(wallet, size);
      });
      return;
    }
    case 'transfer':
      if (c.ids.length === 0) {
        const amount = c.amounts[0] ?? 0n;
        venue.credit(wallet, -amount);
        const route = chain.bridgeRoutes.get(c.to.toLowerCase());
        // Sent to a bridge deposit address: the bridge forwards it (recorded; it leaves the sandbox).
        if (route)
          ctx.bridgeWithdrawals.push({
            id: crypto.randomUUID(),
            address: wallet,
            amount: amount.toString(),
            toChainId: route.toChainId,
            recipient: route.recipient,
            at: ctx.now(),
          });
        else venue.credit(c.to, amount);
      } else {
        c.ids.forEach((id, i) => {
          venue.creditToken(wallet, id.toString(), -(c.amounts[i] ?? 0n));
          venue.creditToken(c.to, id.toString(), c.amounts[i] ?? 0n);
        });
      }
  }
}
