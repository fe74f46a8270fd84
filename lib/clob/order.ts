/**
 * Exchange V2 orders: typed data, signature, and the `POST /order` / `POST /orders` bodies.
 * Source: seed "Order struct (exchange V2)" and PROTOCOL.md §2.3.
 *
 * Struct `Order(uint256 salt,address maker,address signer,uint256 tokenId,uint256 makerAmount,
 * uint256 takerAmount,uint8 side,uint8 signatureType,uint256 timestamp,bytes32 metadata,bytes32 builder)`
 * on `{ name: "Polymarket CTF Exchange", version: "2", chainId, verifyingContract }`.
 * `expiration` is sent but **not** signed.
 */
import * as v from 'valibot';
import type { Address, Hex, LocalAccount } from 'viem';
import {
  addressWord,
  bytes32Word,
  concatWords,
  keccak,
  keccakString,
  signDigest,
  typedDataDigest,
  uintWord,
} from '../eip712';
import { address, bytes32, InvalidFieldError, parseOrThrow, uint256String } from '../validation';
import type { Side } from './amounts';

/** Standard V2 exchange on chain 137 and 80002 (PROTOCOL.md §2.3). */
export const EXCHANGE_V2: Address = '0xE111180000d2663C0091e4f400237545B87B996B';
/** Negative-risk V2 exchange on chain 137 and 80002. */
export const NEG_RISK_EXCHANGE_V2: Address = '0xe2222d279d744050d28e00520010520000310F59';
/** Collateral token (6 decimals). */
export const COLLATERAL_TOKEN: Address = '0xC011a7E12a19f7B1f670d46F03B03f3342E82DFB';
/** Most orders in one `POST /orders` (seed "Limits"). */
export const CLOB_MAX_BATCH = 15;
/** Zero bytes32 (default `metadata` and `builder`). */
export const ZERO_BYTES32: Hex = `0x${'0'.repeat(64)}`;

/** The exchange contract that verifies an order: negative-risk markets use their own exchange. */
export function exchangeAddress({ negRisk }: { negRisk: boolean }): Address {
  return negRisk ? NEG_RISK_EXCHANGE_V2 : EXCHANGE_V2;
}

/** Signature type (seed "Signature types"): 0 EOA, 1 proxy wallet, 2 safe wallet, 3 deposit wallet (ERC-1271). */
export type SignatureType = 0 | 1 | 2 | 3;

/**
 * The 11 signed fields of a V2 order. Integers are decimal strings (`salt` < 2^53, `timestamp` Unix
 * **ms**, amounts in base units); `side` is `'BUY' | 'SELL'` (0 / 1 on the wire of the struct).
 */
export type ClobOrder = {
  salt: string;
  maker: Address;
  signer: Address;
  tokenId: string;
  makerAmount: string;
  takerAmount: string;
  side: Side;
  signatureType: SignatureType;
  timestamp: string;
  metadata: Hex;
  builder: Hex;
};

/** EIP-712 types of the V2 order. */
export const clobOrderTypes = {
  Order: [
    { name: 'salt', type: 'uint256' },
    { name: 'maker', type: 'address' },
    { name: 'signer', type: 'address' },
    { name: 'tokenId', type: 'uint256' },
    { name: 'makerAmount', type: 'uint256' },
    { name: 'takerAmount', type: 'uint256' },
    { name: 'side', type: 'uint8' },
    { name: 'signatureType', type: 'uint8' },
    { name: 'timestamp', type: 'uint256' },
    { name: 'metadata', type: 'bytes32' },
    { name: 'builder', type: 'bytes32' },
  ],
} as const;

const ORDER_TYPEHASH = keccakString(
  'Order(uint256 salt,address maker,address signer,uint256 tokenId,uint256 makerAmount,uint256 takerAmount,uint8 side,uint8 signatureType,uint256 timestamp,bytes32 metadata,bytes32 builder)',
);

const orderSchema = v.strictObject({
  salt: uint256String,
  maker: address,
  signer: address,
  tokenId: uint256String,
  makerAmount: uint256String,
  takerAmount: uint256String,
  side: v.picklist(['BUY', 'SELL'], 'must be "BUY" or "SELL"'),
  signatureType: v.picklist([0, 1, 2, 3], 'must be 0, 1, 2 or 3'),
  timestamp: uint256String,
  metadata: bytes32,
  builder: bytes32,
});

/** Exchange domain for `chainId` and `verifyingContract`. */
export function clobExchangeDomain(chainId: number, verifyingContract: Address) {
  return { name: 'Polymarket CTF Exchange', version: '2', chainId, verifyingContract } as const;
}

/** Inputs of `signClobOrder`. */
export type SignClobOrderInput = { chainId: number; verifyingContract: Address; order: ClobOrder };

/** Validates the 11 order fields; throws `InvalidFieldError` (`order.<field>`). */
export function parseClobOrder(order: unknown): ClobOrder {
  return parseOrThrow(orderSchema, order, 'order') as ClobOrder;
}

/** EIP-712 digest of an order. */
export function clobOrderDigest({ chainId, verifyingContract, order }: SignClobOrderInput): Hex {
  const o = parseClobOrder(order);
  const structHash = keccak(
    concatWords([
      ORDER_TYPEHASH,
      uintWord(BigInt(o.salt)),
      addressWord(o.maker),
      addressWord(o.signer),
      uintWord(BigInt(o.tokenId)),
      uintWord(BigInt(o.makerAmount)),
      uintWord(BigInt(o.takerAmount)),
      uintWord(o.side === 'BUY' ? 0 : 1),
      uintWord(o.signatureType),
      uintWord(BigInt(o.timestamp)),
      bytes32Word(o.metadata),
      bytes32Word(o.builder),
    ]),
  );
  return typedDataDigest(clobExchangeDomain(chainId, verifyingContract), structHash);
}

/** viem typed data of an order (for recovery / `signTypedData`). */
export function clobOrderTypedData({ chainId, verifyingContract, order }: SignClobOrderInput) {
  return {
    domain: clobExchangeDomain(chainId, verifyingContract),
    types: clobOrderTypes,
    primaryType: 'Order' as const,
    message: {
      salt: BigInt(order.salt),
      maker: order.maker,
      signer: order.signer,
      tokenId: BigInt(order.tokenId),
      makerAmount: BigInt(order.makerAmount),
      takerAmount: BigInt(order.takerAmount),
      side: order.side === 'BUY' ? 0 : 1,
      signatureType: order.signatureType,
      timestamp: BigInt(order.timestamp),
      metadata: order.metadata,
      builder: order.builder,
    },
  };
}

/**
 * Signs a V2 order with `account` (must be `order.signer`). Returns a 65-byte hex signature.
 * Throws `InvalidFieldError` for a malformed order or when `account` is not the order's signer.
 * Source: PROTOCOL.md §2.3.
 */
export async function signClobOrder(account: LocalAccount, input: SignClobOrderInput): Promise<Hex> {
  const digest = clobOrderDigest(input);
  if (account.address.toLowerCase() !== input.order.signer.toLowerCase()) {
    throw new InvalidFieldError({ field: 'order.signer', reason: 'must be the address of the signing key' });
  }
  return signDigest(account, digest, () => clobOrderTypedData(input));
}

/** A random order salt below 2^53 (survives JSON as a number), from the platform's crypto RNG. */
export function randomOrderSalt(): string {
  const [hi, lo] = crypto.getRandomValues(new Uint32Array(2));
  return String((hi! & 0x1fffff) * 2 ** 32 + lo!);
}

/**
 * Builds the unsigned order for `signer` (the key's address). Signature type 0: maker = signer;
 * types 1 and 2: maker = `funder` (required); type 3 is out of scope (PROTOCOL.md §2.3).
 * `timestampMs` Unix ms. Amounts come from `toOrderAmounts` / `toMarketOrderAmounts`.
 */
export function buildClobOrder(input: {
  signer: Address;
  signatureType: SignatureType;
  funder?: Address;
  tokenId: string;
  side: Side;
  makerAmount: string;
  takerAmount: string;
  timestampMs: number;
  salt?: string;
  metadata?: Hex;
  builder?: Hex;
}): ClobOrder {
  if (input.signatureType === 3) {
    throw new InvalidFieldError({ field: 'signatureType', reason: 'deposit wallets (type 3) are not supported yet' });
  }
  let maker = input.signer;
  if (input.signatureType !== 0) {
    if (!input.funder) throw new InvalidFieldError({ field: 'funder', reason: 'is required for signature types 1 and 2' });
    maker = input.funder;
  }
  return parseClobOrder({
    salt: input.salt ?? randomOrderSalt(),
    maker,
    signer: input.signer,
    tokenId: input.tokenId,
    makerAmount: input.makerAmount,
    takerAmount: input.takerAmount,
    side: input.side,
    signatureType: input.signatureType,
    timestamp: String(input.timestampMs),
    metadata: input.metadata ?? ZERO_BYTES32,
    builder: input.builder ?? ZERO_BYTES32,
  });
}

/** Order type (seed "Order types"): good-til-cancelled, good-til-date, fill-or-kill, fill-and-kill. */
export type OrderType = 'GTC' | 'GTD' | 'FOK' | 'FAK';

/** `order` inside a `POST /order` body: `salt` and `signatureType` are numbers, everything else strings. */
export type SignedOrderJson = Omit<ClobOrder, 'salt'> & { salt: number; expiration: string; signature: Hex };

/** A `POST /order` body (PROTOCOL.md §2.3). */
export type PostOrderBody = {
  deferExec: false;
  postOnly: boolean;
  order: SignedOrderJson;
  owner: string;
  orderType: OrderType;
};

/**
 * Builds a `POST /order` body. `owner` is the API key; `expiration` Unix **seconds**, required for GTD
 * (and then after `nowMs`), `"0"` otherwise. `postOnly` is refused with FOK and FAK.
 * Throws `InvalidFieldError` (`orderType`, `postOnly`, `expiration`).
 */
export function toPostOrderBody(input: {
  order: ClobOrder;
  signature: Hex;
  owner: string;
  orderType: OrderType;
  postOnly?: boolean;
  expiration?: number;
  nowMs?: number;
}): PostOrderBody {
  const { order, orderType } = input;
  if (!['GTC', 'GTD', 'FOK', 'FAK'].includes(orderType)) {
    throw new InvalidFieldError({ field: 'orderType', reason: 'must be GTC, GTD, FOK or FAK' });
  }
  const postOnly = input.postOnly ?? false;
  if (postOnly && (orderType === 'FOK' || orderType === 'FAK')) {
    throw new InvalidFieldError({ field: 'postOnly', reason: `is not allowed with ${orderType}` });
  }
  let expiration = '0';
  if (orderType === 'GTD') {
    const e = input.expiration;
    const nowS = Math.floor((input.nowMs ?? Date.now()) / 1000);
    if (typeof e !== 'number' || !Number.isSafeInteger(e) || e <= nowS) {
      throw new InvalidFieldError({ field: 'expiration', reason: 'must be a future Unix time in seconds for GTD' });
    }
    expiration = String(e);
  } else if (input.expiration !== undefined && input.expiration !== 0) {
    throw new InvalidFieldError({ field: 'expiration', reason: 'is only allowed with GTD' });
  }
  return {
    deferExec: false,
    postOnly,
    order: {
      salt: Number(order.salt),
      maker: order.maker,
      signer: order.signer,
      tokenId: order.tokenId,
      makerAmount: order.makerAmount,
      takerAmount: order.takerAmount,
      side: order.side,
      signatureType: order.signatureType,
      timestamp: order.timestamp,
      expiration,
      metadata: order.metadata,
      builder: order.builder,
      signature: input.signature,
    },
    owner: input.owner,
    orderType,
  };
}

/** A `POST /orders` body: 1..15 order bodies. Throws `InvalidFieldError` (`orders`). */
export function toPostOrdersBody(orders: readonly PostOrderBody[]): PostOrderBody[] {
  if (orders.length === 0) throw new InvalidFieldError({ field: 'orders', reason: 'must hold at least one order' });
  if (orders.length > CLOB_MAX_BATCH) {
    throw new InvalidFieldError({ field: 'orders', reason: `must hold at most ${CLOB_MAX_BATCH} orders` });
  }
  return [...orders];
}
