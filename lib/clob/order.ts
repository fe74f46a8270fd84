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
import { bytesToHex, concat, hexToBytes, stringToHex, type Address, type Hex, type LocalAccount } from 'viem';
import {
  addressWord,
  bytes32Word,
  concatWords,
  domainSeparator,
  keccak,
  keccakString,
  lazyKeccakString,
  signDigest,
  typedDataDigest,
  uintWord,
} from '../eip712';
import { address, bytes32, InvalidFieldError, parseOrThrow, uint256String } from '../validation';
import { beaconDepositWallet, uupsDepositWallet } from '../relayer/wallet';
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

const ORDER_TYPE_STRING =
  'Order(uint256 salt,address maker,address signer,uint256 tokenId,uint256 makerAmount,uint256 ' +
  'takerAmount,uint8 side,uint8 signatureType,uint256 timestamp,bytes32 metadata,bytes32 builder)';
const ORDER_TYPEHASH = lazyKeccakString(ORDER_TYPE_STRING);

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

/**
 * Exchange domain version: "2" for exchange V2 (standard and negative-risk), "3" for exchange V3 (PROTOCOL.md §4.1).
 */
export type ExchangeDomainVersion = '2' | '3';

/** Exchange domain for `chainId` and `verifyingContract` (`version` "2" unless V3). */
export function clobExchangeDomain(chainId: number, verifyingContract: Address, version: ExchangeDomainVersion = '2') {
  return { name: 'Polymarket CTF Exchange', version, chainId, verifyingContract } as const;
}

/**
 * Inputs of `signClobOrder`. `domainVersion` "3" signs for exchange V3 (default "2"). `beacon`, for
 * type 3 only: the factory's beacon when the deposit wallet is a beacon proxy (PROTOCOL.md §4.2).
 */
export type SignClobOrderInput = {
  chainId: number;
  verifyingContract: Address;
  order: ClobOrder;
  domainVersion?: ExchangeDomainVersion;
  beacon?: Address;
};

/** Validates the 11 order fields; throws `InvalidFieldError` (`order.<field>`). */
export function parseClobOrder(order: unknown): ClobOrder {
  return parseOrThrow(orderSchema, order, 'order') as ClobOrder;
}

/** EIP-712 digest of an order (the order hash; the same for every signature type, PROTOCOL.md §4.5). */
export function clobOrderDigest({ chainId, verifyingContract, order, domainVersion }: SignClobOrderInput): Hex {
  return typedDataDigest(clobExchangeDomain(chainId, verifyingContract, domainVersion), clobOrderStructHash(order));
}

/** The Order struct hash (`contentsHash` of a type-3 signature). Throws `InvalidFieldError` for a malformed order. */
function clobOrderStructHash(order: ClobOrder): Uint8Array {
  const o = parseClobOrder(order);
  return keccak(
    concatWords([
      ORDER_TYPEHASH(),
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
}

/** viem typed data of an order (for recovery / `signTypedData`). */
export function clobOrderTypedData({ chainId, verifyingContract, order, domainVersion }: SignClobOrderInput) {
  return {
    domain: clobExchangeDomain(chainId, verifyingContract, domainVersion),
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
 * Signs an order with `account`. Types 0–2: `account` must be `order.signer`; returns a 65-byte hex
 * signature (PROTOCOL.md §2.3). Type 3: `account` is the deposit wallet's owner and `order.signer` its
 * deposit wallet; returns the 317-byte ERC-7739 signature (PROTOCOL.md §4.5, see
 * {@link signDepositWalletOrder}). Throws `InvalidFieldError` for a malformed order or a signer that is
 * not the key's (or the key's deposit wallet's).
 */
export async function signClobOrder(account: LocalAccount, input: SignClobOrderInput): Promise<Hex> {
  if (input.order.signatureType === 3) return signDepositWalletOrder(account, input);
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
 * types 1 and 2: maker = `funder` (required); type 3: maker = signer = `funder`, the deposit wallet
 * (required; PROTOCOL.md §4.5). `timestampMs` Unix ms. Amounts come from `toOrderAmounts` /
 * `toMarketOrderAmounts`.
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
  let maker = input.signer;
  if (input.signatureType !== 0) {
    if (!input.funder)
      throw new InvalidFieldError({ field: 'funder', reason: 'is required for signature types 1, 2 and 3' });
    maker = input.funder;
  }
  return parseClobOrder({
    salt: input.salt ?? randomOrderSalt(),
    maker,
    signer: input.signatureType === 3 ? maker : input.signer,
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

// ------------------------------------------------------------------------------------------------
// Type 3: deposit wallets (ERC-1271 with ERC-7739 nested TypedDataSign), PROTOCOL.md §4.5

const TDS_TYPEHASH = lazyKeccakString(
  `TypedDataSign(Order contents,string name,string version,uint256 ` +
    `chainId,address verifyingContract,bytes32 salt)${ORDER_TYPE_STRING}`,
);
const DEPOSIT_WALLET_NAME_HASH = lazyKeccakString('DepositWallet');
const DEPOSIT_WALLET_VERSION_HASH = lazyKeccakString('1');
const ORDER_TYPE_HEX = stringToHex(ORDER_TYPE_STRING);
/** Byte length of a type-3 order signature: 65 + 32 + 32 + 186 + 2. */
const DEPOSIT_WALLET_SIGNATURE_BYTES = 317;

/**
 * The digest the owner's key signs for a type-3 order: EIP-712 `TypedDataSign(Order contents, name
 * "DepositWallet", version "1", chainId, verifyingContract = the wallet, salt 0)` on the exchange domain.
 * Throws `InvalidFieldError` for a malformed order.
 */
function depositWalletOrderDigest({ chainId, verifyingContract, order, domainVersion }: SignClobOrderInput): Hex {
  const tds = keccak(
    concatWords([
      TDS_TYPEHASH(),
      clobOrderStructHash(order),
      DEPOSIT_WALLET_NAME_HASH(),
      DEPOSIT_WALLET_VERSION_HASH(),
      uintWord(chainId),
      addressWord(order.signer),
      new Uint8Array(32),
    ]),
  );
  return typedDataDigest(clobExchangeDomain(chainId, verifyingContract, domainVersion), tds);
}

/** viem typed data of the owner's inner signature of a type-3 order (for `signTypedData` / recovery). */
export function depositWalletOrderTypedData(input: SignClobOrderInput) {
  const order = clobOrderTypedData(input);
  return {
    domain: order.domain,
    types: {
      TypedDataSign: [
        { name: 'contents', type: 'Order' },
        { name: 'name', type: 'string' },
        { name: 'version', type: 'string' },
        { name: 'chainId', type: 'uint256' },
        { name: 'verifyingContract', type: 'address' },
        { name: 'salt', type: 'bytes32' },
      ],
      Order: clobOrderTypes.Order,
    },
    primaryType: 'TypedDataSign' as const,
    message: {
      contents: order.message,
      name: 'DepositWallet',
      version: '1',
      chainId: BigInt(input.chainId),
      verifyingContract: input.order.signer,
      salt: ZERO_BYTES32,
    },
  };
}

/**
 * Signs a type-3 order with the deposit wallet's owner key, byte-identical to `@polymarket/clob-client-v2`
 * 1.1.0: `innerSig(65) ‖ appDomainSeparator(32) ‖ contentsHash(32) ‖ Order type string(186) ‖ 0x00ba`.
 * `order.maker` and `order.signer` must both be `account`'s deposit wallet (UUPS, or beacon when
 * `input.beacon` is given; PROTOCOL.md §4.2). Throws `InvalidFieldError` (`order.signatureType`,
 * `order.signer`, `order.maker`) otherwise.
 */
export async function signDepositWalletOrder(account: LocalAccount, input: SignClobOrderInput): Promise<Hex> {
  const { order, chainId } = input;
  if (order.signatureType !== 3)
    throw new InvalidFieldError({ field: 'order.signatureType', reason: 'must be 3 for a deposit-wallet order' });
  const wallets = [
    uupsDepositWallet(account.address, chainId),
    ...(input.beacon ? [beaconDepositWallet(account.address, chainId, input.beacon)] : []),
  ];
  if (!wallets.some((w) => w.toLowerCase() === order.signer.toLowerCase())) {
    throw new InvalidFieldError({ field: 'order.signer', reason: "must be the signing key's deposit wallet" });
  }
  if (order.maker.toLowerCase() !== order.signer.toLowerCase())
    throw new InvalidFieldError({ field: 'order.maker', reason: 'must be the deposit wallet (the signer) for type 3' });
  const inner = await signDigest(account, depositWalletOrderDigest(input), () => depositWalletOrderTypedData(input));
  const sep = domainSeparator(clobExchangeDomain(chainId, input.verifyingContract, input.domainVersion));
  return concat([inner, bytesToHex(sep), bytesToHex(clobOrderStructHash(order)), ORDER_TYPE_HEX, '0x00ba']);
}

/** The parts of a type-3 order signature (PROTOCOL.md §4.5 table). */
export type DepositWalletSignatureParts = { innerSig: Hex; appDomainSeparator: Hex; contentsHash: Hex };

/**
 * Splits a 317-byte type-3 signature, checking the Order type string and its length field. Returns
 * undefined for anything else (wrong length, other type string). The caller still compares
 * `appDomainSeparator` and `contentsHash` with the order's and recovers `innerSig` over
 * {@link depositWalletOrderDigest} — as the wallet's ERC-1271 check does.
 */
export function splitDepositWalletSignature(signature: Hex): DepositWalletSignatureParts | undefined {
  if (!/^0x[0-9a-fA-F]*$/.test(signature) || signature.length !== 2 + 2 * DEPOSIT_WALLET_SIGNATURE_BYTES)
    return undefined;
  const b = hexToBytes(signature);
  if (bytesToHex(b.slice(129, 315)).toLowerCase() !== ORDER_TYPE_HEX.toLowerCase() || b[315] !== 0 || b[316] !== 186)
    return undefined;
  return {
    innerSig: bytesToHex(b.slice(0, 65)),
    appDomainSeparator: bytesToHex(b.slice(65, 97)),
    contentsHash: bytesToHex(b.slice(97, 129)),
  };
}

/** The exchange domain separator and the order's struct hash, as hex (what a type-3 signature must carry). */
export function depositWalletSignatureExpected(input: SignClobOrderInput): {
  appDomainSeparator: Hex;
  contentsHash: Hex;
} {
  return {
    appDomainSeparator: bytesToHex(
      domainSeparator(clobExchangeDomain(input.chainId, input.verifyingContract, input.domainVersion)),
    ),
    contentsHash: bytesToHex(clobOrderStructHash(input.order)),
  };
}
