/**
 * The order book's side of deposit wallets (signature type 3; PROTOCOL.md §4.5) and builder API keys
 * (PROTOCOL.md §4.4 "Builder headers"):
 * - a type-3 order's maker and signer are a deposit wallet the relayer deployed for the API key's
 *   address (else the venue's `the order signer address has to be the address of the API KEY`, §4.7);
 *   its 317-byte signature is checked as the wallet's ERC-1271 `isValidSignature` does — exchange domain
 *   separator and Order struct hash carried in the signature equal the order's, the type string and
 *   length match, and the inner ERC-7739 `TypedDataSign` signature recovers to the wallet's owner;
 * - the wallet must have approved the exchange (collateral `approve` for BUY, outcome-token
 *   `setApprovalForAll` for SELL) through a relayer batch, else `not enough balance / allowance`;
 * - `GET /balance-allowance?signature_type=3` answers the wallet's balance and the allowances it set;
 * - L2 `POST /auth/builder-api-key` creates builder credentials, `GET` lists them, `DELETE` revokes the
 *   one named by the builder key header (`POLY_BUILDER_API_KEY` / `SVC_BUILDER_API_KEY`), or every
 *   live one of the caller when none is named (the official client sends none).
 */
import type { Hono } from 'hono';
import { recoverTypedDataAddress, type Hex } from 'viem';
import {
  depositWalletOrderTypedData,
  depositWalletSignatureExpected,
  splitDepositWalletSignature,
  type ClobOrder,
  type SignClobOrderInput,
} from '../../clob/order';
import { exchangeNameOf, venueContracts, type ExchangeName } from '../../relayer/contracts';
import { iso, randomBytes } from '../http';
import type { ClobExchange } from './exchange';
import { OrderRejectedError } from './venue';

const ALL_EXCHANGES: readonly ExchangeName[] = ['exchangeV2', 'negRiskExchangeV2', 'exchangeV3'];

/**
 * Verifies a type-3 order of the API key's address `apiAddress` (lowercase): the deposit wallet, the
 * ERC-1271-style signature check, and the approval the side needs. Throws `OrderRejectedError` with the
 * venue's message.
 */
export async function checkDepositWalletOrder(
  ex: ClobExchange,
  input: SignClobOrderInput,
  signature: Hex,
  apiAddress: string,
): Promise<void> {
  const chain = ex.ctx.relayerChain;
  chain.settle(ex.ctx.now(), ex.ctx.config.relayerMineMs);
  const order: ClobOrder = input.order;
  const wallet = chain.wallets.get(order.signer.toLowerCase());
  if (!wallet?.deployed || wallet.owner !== apiAddress || order.maker.toLowerCase() !== wallet.address) {
    throw new OrderRejectedError('the order signer address has to be the address of the API KEY');
  }
  const parts = splitDepositWalletSignature(signature);
  const expected = depositWalletSignatureExpected(input);
  if (
    !parts ||
    parts.appDomainSeparator !== expected.appDomainSeparator ||
    parts.contentsHash !== expected.contentsHash
  )
    throw new OrderRejectedError('invalid order signature');
  const owner = await recoverTypedDataAddress({
    ...depositWalletOrderTypedData(input),
    signature: parts.innerSig,
  }).catch(() => undefined);
  if (owner?.toLowerCase() !== wallet.owner) throw new OrderRejectedError('invalid order signature');
  const exchange = exchangeNameOf(input.chainId, input.verifyingContract);
  const approved =
    exchange !== undefined &&
    (order.side === 'BUY'
      ? chain.allowance(wallet.address, exchange) >= BigInt(order.makerAmount)
      : chain.isOperator(wallet.address, exchange));
  if (!approved) throw new OrderRejectedError('not enough balance / allowance');
}

/**
 * `GET /balance-allowance` for `signature_type=3`: the deposit wallet of `apiAddress`, its balance and the allowances
 * it set.
 */
export function depositWalletBalance(
  ex: ClobExchange,
  apiAddress: string,
  assetType: 'COLLATERAL' | 'CONDITIONAL',
  tokenId: string,
) {
  const chain = ex.ctx.relayerChain;
  chain.settle(ex.ctx.now(), ex.ctx.config.relayerMineMs);
  const wallet = chain.walletOf(apiAddress);
  const contracts = (name: ExchangeName) => venueContracts(ex.ctx.config.clobChainId)[name];
  if (!wallet?.deployed)
    return { balance: '0', allowances: Object.fromEntries(ALL_EXCHANGES.map((n) => [contracts(n), '0'])) };
  const balance =
    assetType === 'COLLATERAL' ? ex.venue.balanceOf(wallet.address) : ex.venue.tokenBalance(wallet.address, tokenId);
  const max = ((1n << 256n) - 1n).toString();
  const allowance = (n: ExchangeName) =>
    assetType === 'COLLATERAL'
      ? chain.allowance(wallet.address, n).toString()
      : chain.isOperator(wallet.address, n)
        ? max
        : '0';
  return {
    balance: balance.toString(),
    allowances: Object.fromEntries(ALL_EXCHANGES.map((n) => [contracts(n), allowance(n)])),
  };
}

/** Mounts the L2 builder-API-key routes of `ex` on `app`. */
export function builderKeyRoutes(app: Hono, ex: ClobExchange): void {
  const chain = ex.ctx.relayerChain;
  app.post('/auth/builder-api-key', ex.l2, (c) => {
    const key = {
      key: crypto.randomUUID(),
      secret: Buffer.from(randomBytes(32)).toString('base64'),
      passphrase: Buffer.from(randomBytes(32)).toString('hex'),
    };
    chain.builderKeys.set(key.key, {
      ...key,
      owner: c.var.creds.address.toLowerCase(),
      createdAt: ex.ctx.now(),
      revokedAt: null,
    });
    c.header('Cache-Control', 'no-store');
    return c.json(key);
  });
  app.get('/auth/builder-api-key', ex.l2, (c) => {
    const me = c.var.creds.address.toLowerCase();
    return c.json(
      [...chain.builderKeys.values()]
        .filter((k) => k.owner === me)
        .map((k) => ({
          key: k.key,
          createdAt: iso(k.createdAt),
          revokedAt: k.revokedAt === null ? null : iso(k.revokedAt),
        })),
    );
  });
  app.delete('/auth/builder-api-key', ex.l2, (c) => {
    const me = c.var.creds.address.toLowerCase();
    const named = c.req.header('POLY_BUILDER_API_KEY') ?? c.req.header('SVC_BUILDER_API_KEY');
    const targets = [...chain.builderKeys.values()].filter(
      (k) => k.owner === me && k.revokedAt === null && (!named || k.key === named),
    );
    if (named && targets.length === 0) return c.json({ error: 'invalid revoke builder api key body or headers' }, 400);
    for (const k of targets) k.revokedAt = ex.ctx.now();
    return c.json('OK');
  });
}
