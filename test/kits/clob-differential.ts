/**
 * Both sides of the order-book differential suite (`test/conformance/clob-differential.test.ts`) for one
 * order input: the official client `@polymarket/clob-client-v2` 1.1.0 (`ClobClient.createOrder` /
 * `createMarketOrder` — its price check, its rounding and its `OrderBuilder` — then `orderToJsonV2`), and
 * Countersign's pure modules (`orderRequestAmounts`, `buildClobOrder`, `signClobOrder`,
 * `toPostOrderBody`), as the signer's `prepareClob` chains them.
 *
 * The official client reads the tick size, the fee info and a builder's fee rates from the exchange; here
 * its caches are filled first (the negative-risk flag and the order version are passed), so it makes no
 * request. Its salt is `Math.round(Math.random() × Date.now())`
 * and its timestamp `Date.now()`: both are pinned for the call, and Countersign is given the same salt and
 * time.
 */
import { createWalletClient, http, type Address, type Hex, type WalletClient } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { ClobClient, OrderType, Side, orderToJsonV2, type SignedOrder } from '@polymarket/clob-client-v2';
import { orderRequestAmounts } from '../../lib/clob/amounts';
import {
  buildClobOrder,
  exchangeAddress,
  signClobOrder,
  toPostOrderBody,
  type SignatureType,
} from '../../lib/clob/order';
import { uupsDepositWallet } from '../../lib/relayer/wallet';
import { pin, type Rng } from './seeded';

/** The tick sizes both sides know (the official client's `TickSize`). */
export const TICK_SIZES = ['0.1', '0.01', '0.005', '0.0025', '0.001', '0.0001'] as const;
/** One of `TICK_SIZES`. */
export type TickSize = (typeof TICK_SIZES)[number];

/**
 * One order as a person asks for it. `price` and `size` are decimal strings (Countersign's input; the
 * official client gets `Number(…)` of them). GTC / GTD are limit orders sized in shares; FOK / FAK are
 * market orders sized by `size` (collateral for a BUY, shares for a SELL). `random` pins the official
 * client's `Math.random()` (its salt), `nowMs` its clock.
 */
export type OrderCase = {
  key: Hex;
  chainId: 137 | 80002;
  signatureType: SignatureType;
  /** Types 1 and 2: the funder wallet (the maker). Type 3 uses the key's deposit wallet. */
  funder?: Address;
  tokenId: string;
  side: 'BUY' | 'SELL';
  price: string;
  size: string;
  tickSize: TickSize;
  negRisk: boolean;
  orderType: 'GTC' | 'GTD' | 'FOK' | 'FAK';
  postOnly: boolean;
  /** GTD only: Unix seconds after `nowMs`. */
  expiration?: number;
  metadata?: Hex;
  builder?: Hex;
  owner: string;
  random: number;
  nowMs: number;
};

/** What one side built: the signed order and the exact `POST /order` JSON text. */
export type BuiltOrder = { makerAmount: string; takerAmount: string; signature: Hex; salt: string; json: string };

/** A viem wallet client for `key` (local account: signing makes no request). */
function walletOf(key: Hex): WalletClient {
  return createWalletClient({ account: privateKeyToAccount(key), transport: http('http://127.0.0.1:9') });
}

/** The maker wallet of a case: the funder for types 1-2, the key's deposit wallet for type 3, none for 0. */
export function funderOf(c: OrderCase): Address | undefined {
  if (c.signatureType === 3) return uupsDepositWallet(privateKeyToAccount(c.key).address, c.chainId);
  return c.signatureType === 0 ? undefined : c.funder;
}

/** The official client's order for `c`, with its salt and clock pinned. Rejects where the client refuses. */
export async function sdkOrder(c: OrderCase): Promise<BuiltOrder> {
  const client = new ClobClient({
    host: 'http://clob.invalid',
    chain: c.chainId,
    signer: walletOf(c.key),
    signatureType: c.signatureType,
    funderAddress: funderOf(c),
  });
  client.tickSizes[c.tokenId] = c.tickSize;
  client.feeInfos[c.tokenId] = { rate: 0, exponent: 0 };
  if (c.builder) client.builderFeeRates[c.builder] = { maker: 0, taker: 0 };
  const unpin = [pin(Math, 'random', () => c.random), pin(Date, 'now', () => c.nowMs)];
  try {
    const side = c.side === 'BUY' ? Side.BUY : Side.SELL;
    const extra = { ...(c.metadata ? { metadata: c.metadata } : {}), ...(c.builder ? { builderCode: c.builder } : {}) };
    const options = { tickSize: c.tickSize, negRisk: c.negRisk, version: 2 as const };
    const market = c.orderType === 'FOK' || c.orderType === 'FAK';
    const signed: SignedOrder = market
      ? await client.createMarketOrder(
          {
            tokenID: c.tokenId,
            side,
            amount: Number(c.size),
            price: Number(c.price),
            orderType: c.orderType === 'FOK' ? OrderType.FOK : OrderType.FAK,
            ...extra,
          },
          options,
        )
      : await client.createOrder(
          {
            tokenID: c.tokenId,
            side,
            size: Number(c.size),
            price: Number(c.price),
            ...(c.expiration === undefined ? {} : { expiration: c.expiration }),
            ...extra,
          },
          options,
        );
    const o = signed as SignedOrder & { makerAmount: string; takerAmount: string; salt: string; signature: Hex };
    const json = JSON.stringify(
      orderToJsonV2(o as Parameters<typeof orderToJsonV2>[0], c.owner, c.orderType as OrderType.GTC, c.postOnly),
    );
    return {
      makerAmount: o.makerAmount,
      takerAmount: o.takerAmount,
      signature: o.signature,
      salt: String(o.salt),
      json,
    };
  } finally {
    for (const restore of unpin) restore();
  }
}

/** The salt the official client draws for `c` (`Math.round(random × now)`), as Countersign is given it. */
export function sdkSalt(c: Pick<OrderCase, 'random' | 'nowMs'>): string {
  return String(Math.round(c.random * c.nowMs));
}

/**
 * Countersign's order for `c`: amounts from `orderRequestAmounts`, or `amounts` when given (to sign
 * exactly the official client's amounts), the same salt and time. Throws `InvalidFieldError` where
 * Countersign refuses.
 */
export async function oursOrder(
  c: OrderCase,
  amounts?: { makerAmount: string; takerAmount: string },
): Promise<BuiltOrder> {
  const account = privateKeyToAccount(c.key);
  const a =
    amounts ??
    orderRequestAmounts({ side: c.side, price: c.price, size: c.size, orderType: c.orderType, tickSize: c.tickSize });
  const funder = funderOf(c);
  const order = buildClobOrder({
    signer: account.address,
    signatureType: c.signatureType,
    ...(funder ? { funder } : {}),
    tokenId: c.tokenId,
    side: c.side,
    makerAmount: a.makerAmount,
    takerAmount: a.takerAmount,
    timestampMs: c.nowMs,
    salt: sdkSalt(c),
    ...(c.metadata ? { metadata: c.metadata } : {}),
    ...(c.builder ? { builder: c.builder } : {}),
  });
  const signature = await signClobOrder(account, {
    chainId: c.chainId,
    verifyingContract: exchangeAddress({ negRisk: c.negRisk }),
    order,
  });
  const body = toPostOrderBody({
    order,
    signature,
    owner: c.owner,
    orderType: c.orderType,
    postOnly: c.postOnly,
    ...(c.expiration === undefined ? {} : { expiration: c.expiration }),
    nowMs: c.nowMs,
  });
  return {
    makerAmount: order.makerAmount,
    takerAmount: order.takerAmount,
    signature,
    salt: order.salt,
    json: JSON.stringify(body),
  };
}

// ------------------------------------------------------------------------------------------------
// Generators

const PRICE_DECIMALS: Record<TickSize, number> = {
  '0.1': 1,
  '0.01': 2,
  '0.005': 3,
  '0.0025': 4,
  '0.001': 3,
  '0.0001': 4,
};

/** Decimals of a price at `tick` (the official client's `ROUNDING_CONFIG[tick].price`). */
export function priceDecimals(tick: TickSize): number {
  return PRICE_DECIMALS[tick];
}

/** `units / 10^scale` as a plain decimal string (`decimal(5n, 2)` is `"0.05"`). */
export function decimal(units: bigint, scale: number): string {
  if (scale === 0) return units.toString();
  const s = units.toString().padStart(scale + 1, '0');
  return `${s.slice(0, -scale)}.${s.slice(-scale)}`;
}

/** The tick in units of its own decimals (`0.0025` → 25n). */
export function tickUnits(tick: TickSize): bigint {
  return BigInt(tick.replace('0.', '').replace(/^0+/, ''));
}

/** A price on the tick, in [tick, 1 − tick]. */
export function onTickPrice(rng: Rng, tick: TickSize): string {
  const pd = priceDecimals(tick);
  const t = tickUnits(tick);
  const steps = Number(10n ** BigInt(pd) / t) - 1;
  return decimal(BigInt(rng.int(1, steps)) * t, pd);
}

/** A price in [tick, 1 − tick] with 1-3 decimals more than the tick has (both sides round it). */
export function finePrice(rng: Rng, tick: TickSize): string {
  const pd = priceDecimals(tick);
  const e = rng.int(1, 3);
  const lo = tickUnits(tick) * 10n ** BigInt(e);
  const hi = (10n ** BigInt(pd) - tickUnits(tick)) * 10n ** BigInt(e);
  return decimal(lo + BigInt(rng.int(0, Number(hi - lo))), pd + e);
}

/** A size (or market amount) of at least 0.01: up to 8 integer digits, 0-6 decimals. */
export function sizeString(rng: Rng): string {
  const e = rng.int(0, 7);
  let int = BigInt(rng.int(0, 10 ** e - 1));
  const d = rng.pick([0, 1, 2, 2, 2, 3, 4, 6]);
  const frac = BigInt(rng.int(0, 10 ** d - 1));
  if (int === 0n && frac * 100n < 10n ** BigInt(d)) int = 1n;
  return decimal(int * 10n ** BigInt(d) + frac, d);
}

/**
 * A random order case of `style`: any signature type, chain, side, tick, neg-risk flag, metadata and
 * builder code; limit orders GTC or GTD (with an expiration), post-only or not; market orders FOK or FAK.
 * Prices lie in [tick, 1 − tick]: on the tick, or (ticks with as many decimals as the tick's own, i.e.
 * 0.1, 0.01, 0.001, 0.0001) with up to 3 decimals more.
 */
export function orderCase(rng: Rng, style: 'limit' | 'market'): OrderCase {
  const tickSize = rng.pick(TICK_SIZES);
  const decimalTick = tickUnits(tickSize) === 1n;
  const signatureType = rng.pick([0, 1, 2, 3] as const);
  const nowMs = rng.int(1_600_000_000_000, 2_000_000_000_000);
  const orderType = style === 'limit' ? rng.pick(['GTC', 'GTD'] as const) : rng.pick(['FOK', 'FAK'] as const);
  return {
    key: rng.privateKey(),
    chainId: rng.pick([137, 80002] as const),
    signatureType,
    ...(signatureType === 1 || signatureType === 2 ? { funder: rng.address() } : {}),
    tokenId: BigInt(`0x${rng.hex(64)}`).toString(),
    side: rng.pick(['BUY', 'SELL'] as const),
    price: decimalTick && rng.bool(0.3) ? finePrice(rng, tickSize) : onTickPrice(rng, tickSize),
    size: sizeString(rng),
    tickSize,
    negRisk: rng.bool(),
    orderType,
    postOnly: style === 'limit' && rng.bool(0.3),
    ...(orderType === 'GTD' ? { expiration: Math.floor(nowMs / 1000) + rng.int(1, 400_000_000) } : {}),
    ...(rng.bool(0.2) ? { metadata: `0x${rng.hex(64)}` as Hex } : {}),
    ...(rng.bool(0.2) ? { builder: `0x${rng.hex(64)}` as Hex } : {}),
    owner: `${rng.hex(8)}-${rng.hex(4)}-4${rng.hex(3)}-8${rng.hex(3)}-${rng.hex(12)}`,
    random: rng.next(),
    nowMs,
  };
}

// ------------------------------------------------------------------------------------------------
// The float drift of large orders

/**
 * Decimals of a computed amount at `tick` (the official client's `ROUNDING_CONFIG[tick].amount`): price decimals + 2.
 */
export function amountDecimals(tick: TickSize): number {
  return priceDecimals(tick) + 2;
}

/**
 * Where the official client's float can drift: it computes `size × price` (a market BUY: `amount / price`)
 * in binary floating point, then rounds up at (amount decimals + 4) and down at the amount decimals. Once
 * the value times 10^(amount decimals + 4) nears 2^52, the float's own error reaches those guard digits and
 * the result can land one unit of the last amount decimal off. This is the bound used: value ≥ 2^51 / 10^(amount
 * decimals + 4), i.e. about 225 000 USDC (or shares) at 6 amount decimals (ticks 0.0001 and 0.0025), 2.25 million at 5
 * (0.001, 0.005); drift was seen from 379 216 USDC.
 */
export function floatDriftFloor(tick: TickSize): number {
  return 2 ** 51 / 10 ** (amountDecimals(tick) + 4);
}

/** Which amount the official client computes with a float for `c` (the other one is the input itself). */
export function computedAmount(c: Pick<OrderCase, 'side' | 'orderType'>): 'makerAmount' | 'takerAmount' {
  const market = c.orderType === 'FOK' || c.orderType === 'FAK';
  return c.side === 'BUY' && !market ? 'makerAmount' : 'takerAmount';
}

/**
 * Whether the official client's order differs from ours only by the float drift: the input amount equal,
 * the computed amount one unit of its last decimal apart, at a value from `floatDriftFloor` up.
 */
export function isFloatDrift(c: OrderCase, sdk: BuiltOrder, ours: BuiltOrder): boolean {
  const computed = computedAmount(c);
  const input = computed === 'makerAmount' ? 'takerAmount' : 'makerAmount';
  const unit = 10n ** BigInt(6 - amountDecimals(c.tickSize));
  const gap = BigInt(sdk[computed]) - BigInt(ours[computed]);
  return (
    sdk[input] === ours[input] &&
    (gap === unit || gap === -unit) &&
    Number(ours[computed]) / 1e6 >= floatDriftFloor(c.tickSize)
  );
}
