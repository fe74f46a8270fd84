/**
 * Order-book signing against the official client as an oracle, on seeded random inputs (`FUZZ_CASES` per
 * kind, 300 by default; `npm run fuzz` runs 20 000 from a fresh seed; `test/kits/seeded.ts`). For the same
 * key, salt and time, Countersign's pure modules and `@polymarket/clob-client-v2` 1.1.0 must build the same
 * bytes:
 * - L1 headers (`buildL1Headers` vs `createL1Headers`): ClobAuth signature, address, timestamp, nonce, for
 *   random keys, chains, timestamps and nonces up to 2^53 − 1;
 * - L2 headers (`buildL2Headers` vs `createL2Headers`): the HMAC for random secrets (standard, url-safe,
 *   unpadded base64), timestamps, methods, paths and bodies (UTF-8 included);
 * - limit orders (GTC, GTD) and market orders (FOK, FAK): the `POST /order` JSON text, signature included,
 *   across signature types 0-3, both chains, neg-risk or not, every tick size, BUY and SELL, post-only,
 *   expirations, metadata and builder codes, prices anywhere in [tick, 1 − tick] (more decimals than the
 *   tick too, so both sides round), sizes from 0.01 to 10^7.
 *
 * The known differences, each asserted (PROTOCOL.md §2; the rules are stated in `lib/clob/amounts.ts` and
 * `lib/clob/auth.ts`):
 * 1. Large orders: the official client computes `size × price` (`amount / price`) in floats, which drift by
 *    one unit of the last amount decimal from about 225 000 USDC at ticks 0.0001 and 0.0025 (2.25 million
 *    at 0.001 and 0.005; `floatDriftFloor`; seen from about 380 000). Countersign's amount is exact; the
 *    main comparison accepts only that one-unit gap above the bound, and a targeted run asserts the exact
 *    value.
 * 2. A size (or market amount) below 0.01 rounds down to 0: the official client signs an order of zero
 *    amounts, Countersign refuses it.
 * 3. L2 signs the bare path: Countersign leaves a query string out of the HMAC; the official client signs
 *    the path it is given (its own calls pass the bare path and send the query apart).
 * 4. Decimal strings: the official client takes JS numbers, so any text `Number()` reads is an order to it
 *    (`"5e-1"`, `"+0.5"`, `".5"`, `"00.5"`, `" 0.5"`, `"0x10"`); Countersign refuses all but plain decimals.
 * 5. A price outside [tick, 1 − tick] is refused by both.
 * 6. At ticks 0.005 and 0.0025 a price between two ticks is rounded to a multiple of the tick by
 *    Countersign; the official client rounds it to the tick's decimals only and signs the off-tick price.
 */
import { describe, expect, it } from 'vitest';
import { createWalletClient, http, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { createL1Headers, createL2Headers } from '@polymarket/clob-client-v2';
import { buildL1Headers, buildL2Headers } from '../../lib/clob/auth';
import { orderRequestAmounts } from '../../lib/clob/amounts';
import { applyHeaderSet } from '../../lib/http/headers';
import { InvalidFieldError } from '../../lib/validation';
import { forEachCase, fuzzRun, timeoutFor, type Rng } from '../kits/seeded';
import {
  amountDecimals,
  computedAmount,
  decimal,
  floatDriftFloor,
  isFloatDrift,
  onTickPrice,
  orderCase,
  oursOrder,
  priceDecimals,
  sdkOrder,
  tickUnits,
  type OrderCase,
} from '../kits/clob-differential';

const RUN = fuzzRun('clob-differential', 300);

/** A viem wallet client for `key` (the official client's signer; a local account makes no request). */
const walletFor = (key: Hex) =>
  createWalletClient({ account: privateKeyToAccount(key), transport: http('http://127.0.0.1:9') });

/** Text with ASCII, accented letters, symbols outside the BMP and JSON-significant characters. */
function text(rng: Rng, max: number): string {
  const pool = ['a', 'Z', '0', '9', ' ', '"', '\\', '/', '?', '&', '=', 'é', '€', 'ß', '中', '😀', '\n'];
  return Array.from({ length: rng.int(0, max) }, () => rng.pick(pool)).join('');
}

/** The inputs of one L2 header set. */
type L2Case = {
  key: Hex;
  secret: string;
  timestamp: number;
  method: string;
  requestPath: string;
  body?: string;
  apiKey: string;
  passphrase: string;
};

/** A random L2 case: secret in standard, url-safe or unpadded url-safe base64; a JSON body or none. */
function l2Case(rng: Rng): L2Case {
  const std = Buffer.from(rng.bytes(rng.pick([32, 48, 64, rng.int(1, 80)]))).toString('base64');
  const urlSafe = std.replace(/\+/g, '-').replace(/\//g, '_');
  const secret = rng.pick([std, urlSafe, urlSafe.replace(/=+$/, '')]);
  const segments = Array.from({ length: rng.int(1, 4) }, () =>
    rng.pick(['data', 'order', 'orders', 'v1', 'heartbeats', rng.hex(rng.int(1, 66)), `0x${rng.hex(64)}`]),
  );
  const body = rng.bool(0.3)
    ? undefined
    : JSON.stringify({ [text(rng, 6)]: text(rng, 40), n: rng.int(0, 2 ** 40), list: [text(rng, 5), rng.bool()] });
  return {
    key: rng.privateKey(),
    secret,
    timestamp: rng.int(0, 10_000_000_000),
    method: rng.pick(['GET', 'POST', 'DELETE', 'PUT', 'PATCH']),
    requestPath: `/${segments.join('/')}`,
    ...(body === undefined ? {} : { body }),
    apiKey: `${rng.hex(8)}-${rng.hex(4)}-4${rng.hex(3)}-8${rng.hex(3)}-${rng.hex(12)}`,
    passphrase: rng.hex(64),
  };
}

/** The official L2 headers of `c` for `requestPath`. */
function sdkL2(c: L2Case, requestPath: string) {
  return createL2Headers(
    walletFor(c.key),
    { key: c.apiKey, secret: c.secret, passphrase: c.passphrase },
    { method: c.method, requestPath, ...(c.body === undefined ? {} : { body: c.body }) },
    c.timestamp,
  );
}

/** Countersign's L2 headers of `c` for `requestPath`, with the venue's header names. */
function oursL2(c: L2Case, requestPath: string) {
  const credentials = { apiKey: c.apiKey, secret: c.secret, passphrase: c.passphrase };
  const h = buildL2Headers({
    address: privateKeyToAccount(c.key).address,
    credentials,
    timestamp: c.timestamp,
    method: c.method,
    requestPath,
    ...(c.body === undefined ? {} : { body: c.body }),
  });
  return applyHeaderSet(h, 'venue');
}

describe('L1 headers', () => {
  it(
    'equal createL1Headers: the ClobAuth signature for any key, chain, timestamp and nonce',
    async () => {
      await forEachCase(
        RUN,
        'l1',
        (rng) => ({
          key: rng.privateKey(),
          chainId: rng.pick([137, 80002, rng.int(1, 2 ** 32)]),
          timestamp: rng.int(0, 10_000_000_000),
          nonce: rng.bool() ? rng.int(0, 100) : rng.int(0, Number.MAX_SAFE_INTEGER),
        }),
        async (c) => {
          const official = await createL1Headers(walletFor(c.key), c.chainId, c.nonce, c.timestamp);
          expect(applyHeaderSet(await buildL1Headers(privateKeyToAccount(c.key), c), 'venue')).toStrictEqual(official);
        },
      );
    },
    timeoutFor(RUN, 15),
  );
});

describe('L2 headers', () => {
  it(
    'equal createL2Headers: the HMAC for any secret encoding, timestamp, method, path and body',
    async () => {
      await forEachCase(RUN, 'l2', l2Case, async (c) => {
        expect(oursL2(c, c.requestPath)).toStrictEqual(await sdkL2(c, c.requestPath));
      });
    },
    timeoutFor(RUN, 15),
  );

  it(
    'sign the bare path: a query string is left out, as the official client signs its own requests',
    async () => {
      await forEachCase(
        RUN,
        'l2-query',
        (rng) => ({
          ...l2Case(rng),
          query:
            `?${rng.hex(rng.int(1, 8))}=${encodeURIComponent(text(rng, 12))}` +
            `&next_cursor=${rng.pick(['MA==', 'LTE=', rng.hex(12)])}`,
        }),
        async (c) => {
          const ours = oursL2(c, c.requestPath + c.query);
          expect(ours).toStrictEqual(await sdkL2(c, c.requestPath));
          expect(ours.POLY_SIGNATURE).not.toBe((await sdkL2(c, c.requestPath + c.query)).POLY_SIGNATURE);
        },
      );
    },
    timeoutFor(RUN, 15),
  );
});

/** Tallies of one order comparison run: identical bodies, and bodies apart only by the float drift. */
type Tally = { same: number; drift: number };

/**
 * Compares one order: the JSON texts are equal, or (exception 1) differ only by the float drift, and then
 * Countersign signing the official client's amounts gives the official client's body exactly.
 */
async function compareOrder(c: OrderCase, tally: Tally): Promise<void> {
  const sdk = await sdkOrder(c);
  const ours = await oursOrder(c);
  if (sdk.json === ours.json) {
    tally.same++;
    return;
  }
  if (!isFloatDrift(c, sdk, ours)) expect(ours.json).toBe(sdk.json);
  expect((await oursOrder(c, sdk)).json).toBe(sdk.json);
  tally.drift++;
}

describe('orders', () => {
  it.each(['limit', 'market'] as const)(
    '%s orders equal the official client byte for byte, but for the float drift of a large order',
    async (style) => {
      const tally: Tally = { same: 0, drift: 0 };
      await forEachCase(
        RUN,
        `${style}-order`,
        (rng) => orderCase(rng, style),
        (c) => compareOrder(c, tally),
      );
      if (RUN.fuzzing)
        console.log(`${style} orders: ${tally.same} identical, ${tally.drift} apart by the float drift only`);
      expect(tally.same + tally.drift).toBe(RUN.cases);
    },
    timeoutFor(RUN, 15),
  );
});

describe('known differences', () => {
  it(
    'a large order keeps its exact amount where the official float drifts by one unit',
    async () => {
      let drifted = 0;
      await forEachCase(
        RUN,
        'large-order',
        (rng) => {
          const tickSize = rng.pick(['0.0001', '0.0025', '0.001', '0.005'] as const);
          const c = orderCase(rng, rng.pick(['limit', 'market'] as const));
          const price = onTickPrice(rng, tickSize);
          // A value between half the drift floor and 100 times it (USDC for a BUY's amount, shares otherwise).
          const value = floatDriftFloor(tickSize) * (0.5 + rng.next() * 99.5);
          const size =
            c.side === 'BUY' && c.orderType !== 'GTC' && c.orderType !== 'GTD'
              ? value * Number(price)
              : value / Number(price);
          return { ...c, tickSize, price, size: (Math.floor(size * 100) / 100).toFixed(2) };
        },
        async (c) => {
          const ours = await oursOrder(c);
          expectExact(c, ours);
          const sdk = await sdkOrder(c);
          if (sdk.json === ours.json) return;
          expect(isFloatDrift(c, sdk, ours)).toBe(true);
          drifted++;
        },
      );
      if (RUN.fuzzing) console.log(`large orders: ${drifted} of ${RUN.cases} drifted in the official client`);
      if (RUN.cases >= 100) expect(drifted).toBeGreaterThan(0);
    },
    timeoutFor(RUN, 15),
  );

  it(
    'a size or market amount below 0.01 is refused, where the official client signs zero amounts',
    async () => {
      await forEachCase(
        RUN,
        'tiny-size',
        (rng) => ({
          ...orderCase(rng, rng.pick(['limit', 'market'] as const)),
          size: decimal(BigInt(rng.int(1, 9_999)), 6),
        }),
        async (c) => {
          const sdk = await sdkOrder(c);
          expect([sdk.makerAmount, sdk.takerAmount]).toEqual(['0', '0']);
          expect(await refusal(oursOrder(c))).toMatchObject({
            field: c.orderType === 'GTC' || c.orderType === 'GTD' ? 'size' : 'amount',
          });
        },
      );
    },
    timeoutFor(RUN, 15),
  );

  it(
    'a price outside [tick, 1 − tick] is refused by both',
    async () => {
      await forEachCase(
        RUN,
        'price-out-of-range',
        (rng) => {
          const c = orderCase(rng, rng.pick(['limit', 'market'] as const));
          const pd = priceDecimals(c.tickSize);
          const e = rng.int(1, 3);
          const t = tickUnits(c.tickSize) * 10n ** BigInt(e);
          const one = 10n ** BigInt(pd + e);
          const price = rng.pick([
            decimal(BigInt(rng.int(1, Number(t) - 1)), pd + e), // below the tick
            decimal(one - t + BigInt(rng.int(1, Number(t))), pd + e), // above 1 − tick, up to 1
            decimal(BigInt(rng.int(1, 1_000)) * one + BigInt(rng.int(0, Number(one) - 1)), pd + e), // above 1
          ]);
          return { ...c, price };
        },
        async (c) => {
          await expect(sdkOrder(c)).rejects.toThrow(/invalid price/);
          expect(await refusal(oursOrder(c))).toMatchObject({ field: 'price' });
        },
      );
    },
    timeoutFor(RUN, 15),
  );

  it(
    'a decimal string that is not plain is refused, where the official client reads it as a number',
    async () => {
      await forEachCase(
        RUN,
        'loose-decimal',
        (rng) => {
          const c = orderCase(rng, rng.pick(['limit', 'market'] as const));
          const field = rng.pick(['price', 'size'] as const);
          return { c, field, loose: loosen(rng, c[field]) };
        },
        async ({ c, field, loose }) => {
          expect(Number(loose)).toBe(Number(c[field]));
          const sdk = await sdkOrder({ ...c, [field]: loose });
          expect(sdk.json).toBe((await sdkOrder(c)).json);
          expect(await refusal(oursOrder({ ...c, [field]: loose }))).toMatchObject({
            field: c.orderType === 'GTC' || c.orderType === 'GTD' || field === 'price' ? field : 'amount',
          });
        },
      );
    },
    timeoutFor(RUN, 15),
  );

  it(
    'an off-tick price at tick 0.005 or 0.0025 is rounded to the tick, where the official client signs it off the tick',
    async () => {
      await forEachCase(
        RUN,
        'off-tick',
        (rng) => {
          const c = orderCase(rng, rng.pick(['limit', 'market'] as const));
          const tickSize = rng.pick(['0.005', '0.0025'] as const);
          const t = Number(tickUnits(tickSize));
          const steps = 10 ** priceDecimals(tickSize) / t - 1; // ticks in [tick, 1 − tick]
          // Strictly between the k-th and the (k + 1)-th tick, both in range.
          const units = BigInt(rng.int(1, steps - 1) * t + rng.int(1, t - 1));
          // Sizes up to 100 keep every amount far below the float drift (exception 1).
          return {
            ...c,
            tickSize,
            price: decimal(units, priceDecimals(tickSize)),
            size: decimal(BigInt(rng.int(1, 10_000)), 2),
          };
        },
        async (c) => {
          const snapped = orderRequestAmounts(c).price;
          expect(snapped).not.toBe(c.price);
          const ours = await oursOrder(c);
          expect(ours.json).toBe((await sdkOrder({ ...c, price: snapped })).json);
          expect(ours.json).not.toBe((await sdkOrder(c)).json);
        },
      );
    },
    timeoutFor(RUN, 15),
  );
});

/** Resolves the `InvalidFieldError` that `p` rejects with (fails when it resolves or rejects otherwise). */
async function refusal(p: Promise<unknown>): Promise<InvalidFieldError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(InvalidFieldError);
  return err as InvalidFieldError;
}

/**
 * Asserts that Countersign's amounts are exact for an on-tick price: collateral × 10^pd = shares × price
 * units (limit orders and market SELLs), or shares the largest multiple of one unit that `amount` pays
 * for at the price (market BUY: shares × price ≤ collateral < (shares + unit) × price).
 */
function expectExact(c: OrderCase, ours: { makerAmount: string; takerAmount: string }): void {
  const pd = priceDecimals(c.tickSize);
  const pu = BigInt(c.price.replace('.', ''));
  const collateral = BigInt(c.side === 'BUY' ? ours.makerAmount : ours.takerAmount) * 10n ** BigInt(pd);
  const shares = BigInt(c.side === 'BUY' ? ours.takerAmount : ours.makerAmount);
  if (computedAmount(c) === 'takerAmount' && c.side === 'BUY') {
    const unit = 10n ** BigInt(6 - amountDecimals(c.tickSize));
    expect(
      shares * pu <= collateral && collateral < (shares + unit) * pu,
      `${shares} shares at ${c.price} for ${collateral}`,
    ).toBe(true);
  } else {
    expect(shares * pu).toBe(collateral);
  }
}

/**
 * The same value as the plain decimal `v`, written as the official client's `Number()` reads it but Countersign
 * refuses.
 */
function loosen(rng: Rng, v: string): string {
  const [int = '', frac = ''] = v.split('.');
  const digits = `${int}${frac}`.replace(/^0+(?=\d)/, '');
  const forms = [
    `${digits}e-${frac.length}`, // exponent
    `${decimal(BigInt(digits), frac.length + 2)}e2`,
    `+${v}`,
    `0${v}`, // leading zero
    ` ${v}`,
    `${v}\n`,
    ...(int === '0' && frac ? [`.${frac}`] : []), // bare point
    ...(frac ? [] : [`${int}.`, `0x${BigInt(int).toString(16)}`]),
  ];
  return rng.pick(forms);
}
