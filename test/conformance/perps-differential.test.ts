/**
 * Perps command building and signing against the official client as an oracle, on seeded random inputs
 * (`FUZZ_CASES` per kind, 300 by default; `npm run fuzz` runs 20 000 from a fresh seed;
 * `test/kits/seeded.ts`). The official client `@polymarket/client` 0.2.0 runs in memory
 * (`test/kits/perps-oracle.ts`): its session signs with the proxy key, its secure client with the owner
 * key, and every command it sends is recorded. For the same key, salt and time, Countersign's
 * `lib/perps/commands.ts` + `signPerpsCommand` must give the same envelope: the signature (so the signed
 * tuple, its msgpack bytes and the EIP-712 digest), `salt`, `ts`, `exp`, `label` and the JSON `op`. Kinds:
 * createOrders (1-8 orders: gtc / ioc / fok, with or without price, post-only, reduce-only, client order
 * ids), an order with its take-profit and / or stop-loss (group `"order"`, market or limit triggers),
 * cancels by order id and by client order id (one or many), cancelAll (all or one instrument; REST),
 * updateLeverage, and the owner's commands the client signs: deleteProxy (revoke), withdraw and
 * createProxy (open a session). REST commands also match Countersign's endpoint (method and path).
 * Not compared here: position-scoped take-profit / stop-loss (group `"position"`, whose exit side the
 * client reads from the portfolio), autoCancel, updateMargin and internalTransfer (the client signs none).
 *
 * The JSON is compared as a value: the official client writes its keys in another order (`args` before
 * `type`, `po` before `qty`), which JSON does not give a meaning to. The known differences, each asserted:
 * Countersign refuses inputs the official client signs as they are given —
 * - decimal strings that are not plain (`"1e5"`, `"-1"`, `".5"`, `"01"`, `" 1"`, `""`, `"0"`) and JS
 *   numbers (`1e21` is signed as `"1e+21"`): the official client passes any string through unchecked;
 * - an `exp` in the past or more than the gateway's 30 s command timeout ahead;
 * - a leverage above 2^31 − 1;
 * - an address neither all lowercase nor EIP-55 checksummed;
 * - a client order id twice in one batch, and more than 100 orders in one batch.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getAddress, type LocalAccount } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { OrderSide, PerpsTimeInForce, type PerpsSession } from '@polymarket/client';
import {
  cancelAll,
  cancelOrders,
  cancelOrdersCOID,
  createOrders,
  createProxy,
  deleteProxy,
  PERPS_MAX_BATCH,
  updateLeverage,
  withdraw,
  type PerpsCommand,
  type PerpsOrderInput,
} from '../../lib/perps/commands';
import { signPerpsCommand } from '../../lib/perps/envelope';
import { InvalidFieldError } from '../../lib/validation';
import { forEachCase, fuzzRun, seeded, timeoutFor, type Rng } from '../kits/seeded';
import { startPerpsOracle, type PerpsOracle, type SentCommand } from '../kits/perps-oracle';

const RUN = fuzzRun('perps-differential', 300);
const keys = seeded(RUN.seed);
const OWNER_KEY = keys.privateKey();
const PROXY_KEY = keys.privateKey();
let oracle: PerpsOracle;
let owner: LocalAccount;
let proxy: LocalAccount;

beforeAll(async () => {
  oracle = await startPerpsOracle(OWNER_KEY, PROXY_KEY);
  owner = privateKeyToAccount(OWNER_KEY);
  proxy = privateKeyToAccount(PROXY_KEY);
});
afterAll(async () => {
  await oracle?.close();
});

/** The envelope parameters of a case: time (Unix ms), salt (uint32) and an optional `exp` in the accepted window. */
type Stamp = { ts: number; salt: number; exp?: number };

/** A random stamp; `withExp` false for the commands the official client sends without `exp`. */
function stamp(rng: Rng, withExp = true): Stamp {
  const ts = rng.int(1_600_000_000_000, 2_000_000_000_000);
  return { ts, salt: rng.int(0, 2 ** 32 - 1), ...(withExp && rng.bool(0.3) ? { exp: ts + rng.int(1, 30_000) } : {}) };
}

/** A plain decimal string > 0: up to 10 integer digits and 8 decimals (trailing zeros kept). */
function dec(rng: Rng): string {
  const int = rng.int(0, 10 ** rng.int(0, 10) - 1).toString();
  const frac = Array.from({ length: rng.pick([0, 0, 1, 2, 3, 4, 6, 8]) }, () => rng.int(0, 9)).join('');
  const s = frac ? `${int}.${frac}` : int;
  return /^0(\.0*)?$/.test(s) ? '1' : s;
}

/** A random order: a tif always, a price always for gtc, sometimes post-only, reduce-only, a client order id. */
function order(rng: Rng): PerpsOrderInput & { tif: 'gtc' | 'ioc' | 'fok' } {
  const tif = rng.pick(['gtc', 'ioc', 'fok'] as const);
  return {
    iid: rng.bool(0.8) ? rng.int(0, 200) : rng.int(0, Number.MAX_SAFE_INTEGER),
    buy: rng.bool(),
    qty: dec(rng),
    ...(tif === 'gtc' || rng.bool() ? { p: dec(rng) } : {}),
    tif,
    ...(tif === 'gtc' && rng.bool(0.6) ? { po: rng.bool() } : {}),
    ...(rng.bool(0.6) ? { ro: rng.bool() } : {}),
    ...(rng.bool(0.3) ? { c: rng.hex(32) } : {}),
  };
}

/** The official client's order request for `o`. */
function sdkOrder(o: PerpsOrderInput & { tif: 'gtc' | 'ioc' | 'fok' }) {
  const base = {
    instrumentId: o.iid,
    side: o.buy ? OrderSide.BUY : OrderSide.SELL,
    quantity: o.qty,
    ...(o.ro === undefined ? {} : { reduceOnly: o.ro }),
    ...(o.c === undefined ? {} : { clientOrderId: o.c }),
  };
  if (o.tif === 'gtc')
    return {
      ...base,
      price: o.p ?? '',
      timeInForce: PerpsTimeInForce.GTC as const,
      ...(o.po === undefined ? {} : { postOnly: o.po }),
    };
  return {
    ...base,
    ...(o.p === undefined ? {} : { price: o.p }),
    timeInForce: o.tif === 'ioc' ? (PerpsTimeInForce.IOC as const) : (PerpsTimeInForce.FOK as const),
  };
}

/** JSON round trip: what the wire carries (no `undefined`, numbers and strings as sent). */
const plain = (x: unknown): unknown => JSON.parse(JSON.stringify(x));

/** Signs `command` as Countersign does, with `account` and the case's stamp; withdraw on its own domain. */
async function ours(account: LocalAccount, command: PerpsCommand, s: Stamp) {
  const domain = { name: 'Polymarket', version: '1', chainId: oracle.chainId };
  const withdrawDomain = { ...domain, verifyingContract: oracle.withdraw.contract };
  return signPerpsCommand(account, {
    command,
    domain,
    withdrawDomain,
    nowMs: s.ts,
    salt: s.salt,
    ...(s.exp === undefined ? {} : { exp: s.exp }),
  });
}

/** Asserts a recorded session frame carries exactly Countersign's envelope (plus its frame id and `req`). */
async function expectWs(sent: SentCommand, command: PerpsCommand, s: Stamp): Promise<void> {
  expect(sent.channel).toBe('ws');
  const { id: _id, req, ...envelope } = sent.body;
  expect(req).toBe('post');
  expect(envelope).toStrictEqual(plain(await ours(proxy, command, s)));
}

/** Asserts a recorded REST command went to Countersign's endpoint with exactly Countersign's envelope. */
async function expectRest(sent: SentCommand, account: LocalAccount, command: PerpsCommand, s: Stamp): Promise<void> {
  expect({ channel: sent.channel, method: sent.method, path: sent.path }).toStrictEqual({
    channel: 'rest',
    ...command.endpoint,
  });
  expect(sent.body).toStrictEqual(plain(await ours(account, command, s)));
}

/** Runs the official client's call for a case under the case's stamp. */
const official = (s: Stamp, send: (session: PerpsSession) => Promise<unknown>) =>
  oracle.command(s.ts, s.salt, () => send(oracle.session));
const expiresAt = (s: Stamp) => (s.exp === undefined ? {} : { expiresAt: s.exp });

describe('proxy-signed commands', () => {
  it(
    'createOrders equals postOrders: 1-8 orders of every time in force, flag and client order id',
    async () => {
      await forEachCase(
        RUN,
        'create-orders',
        (rng) => ({ s: stamp(rng), orders: Array.from({ length: rng.int(1, 8) }, () => order(rng)) }),
        async ({ s, orders }) => {
          const sent = await official(s, (session) =>
            session.postOrders({ orders: orders.map(sdkOrder), ...expiresAt(s) }),
          );
          await expectWs(sent, createOrders({ orders }), s);
        },
      );
    },
    timeoutFor(RUN, 15),
  );

  it(
    'an order with its take-profit and stop-loss (group "order") equals placeOrder with takeProfit / stopLoss',
    async () => {
      await forEachCase(
        RUN,
        'order-tpsl',
        (rng) => {
          const entry = order(rng);
          const trigger = () => ({ triggerPrice: dec(rng), ...(rng.bool() ? { limitPrice: dec(rng) } : {}) });
          const which = rng.pick(['tp', 'sl', 'both'] as const);
          return {
            s: stamp(rng),
            entry,
            ...(which === 'sl' ? {} : { takeProfit: trigger() }),
            ...(which === 'tp' ? {} : { stopLoss: trigger() }),
          };
        },
        async ({ s, entry, takeProfit, stopLoss }) => {
          const sent = await official(s, (session) =>
            session.placeOrder({
              ...sdkOrder(entry),
              ...(takeProfit ? { takeProfit } : {}),
              ...(stopLoss ? { stopLoss } : {}),
              ...expiresAt(s),
            } as Parameters<PerpsSession['placeOrder']>[0]),
          );
          const leg = (tpsl: 'tp' | 'sl', t: { triggerPrice: string; limitPrice?: string }): PerpsOrderInput => ({
            iid: entry.iid,
            buy: !entry.buy,
            qty: entry.qty,
            ...(t.limitPrice === undefined ? {} : { p: t.limitPrice }),
            ro: true,
            tr: { tpsl, trp: t.triggerPrice, ...(t.limitPrice === undefined ? { market: true } : {}) },
          });
          const legs = [...(takeProfit ? [leg('tp', takeProfit)] : []), ...(stopLoss ? [leg('sl', stopLoss)] : [])];
          await expectWs(sent, createOrders({ orders: [entry, ...legs], group: 'order' }), s);
        },
      );
    },
    timeoutFor(RUN, 15),
  );

  it(
    'cancels by order id and by client order id equal cancelOrder / cancelOrders',
    async () => {
      await forEachCase(
        RUN,
        'cancels',
        (rng) => {
          const n = rng.int(1, 10);
          const byCoid = rng.bool();
          return {
            s: stamp(rng),
            byCoid,
            single: n === 1 && rng.bool(),
            oids: Array.from({ length: n }, () => rng.int(0, Number.MAX_SAFE_INTEGER)),
            coids: Array.from({ length: n }, () => rng.hex(32)),
          };
        },
        async ({ s, byCoid, single, oids, coids }) => {
          const sent = await official(s, (session) => {
            if (single)
              return session.cancelOrder({
                ...(byCoid ? { clientOrderId: coids[0]! } : { orderId: oids[0]! }),
                ...expiresAt(s),
              } as Parameters<PerpsSession['cancelOrder']>[0]);
            return session.cancelOrders({
              ...(byCoid ? { clientOrderIds: coids } : { orderIds: oids }),
              ...expiresAt(s),
            } as Parameters<PerpsSession['cancelOrders']>[0]);
          });
          await expectWs(
            sent,
            byCoid
              ? cancelOrdersCOID({ coids: single ? coids.slice(0, 1) : coids })
              : cancelOrders({ oids: single ? oids.slice(0, 1) : oids }),
            s,
          );
        },
      );
    },
    timeoutFor(RUN, 15),
  );

  it(
    'cancelAll equals cancelAllOrders (REST): every instrument or one',
    async () => {
      await forEachCase(
        RUN,
        'cancel-all',
        (rng) => ({ s: stamp(rng), ...(rng.bool() ? { iid: rng.int(0, 100_000) } : {}) }),
        async ({ s, iid }) => {
          const sent = await official(s, (session) =>
            session.cancelAllOrders({ ...(iid === undefined ? {} : { instrumentId: iid }), ...expiresAt(s) }),
          );
          await expectRest(sent, proxy, cancelAll(iid === undefined ? {} : { iid }), s);
        },
      );
    },
    timeoutFor(RUN, 15),
  );

  it(
    'updateLeverage equals updateLeverage: any instrument, leverage 1 to 2^31 − 1, cross or isolated',
    async () => {
      await forEachCase(
        RUN,
        'leverage',
        (rng) => ({
          s: stamp(rng, false),
          iid: rng.int(0, 100_000),
          lev: rng.bool(0.8) ? rng.int(1, 100) : rng.int(1, 0x7fffffff),
          cross: rng.bool(),
        }),
        async ({ s, iid, lev, cross }) => {
          const sent = await official(s, (session) =>
            session.updateLeverage({ instrumentId: iid, leverage: lev, crossMargin: cross }),
          );
          await expectWs(sent, updateLeverage({ iid, lev, cross }), s);
        },
      );
    },
    timeoutFor(RUN, 15),
  );
});

describe('owner-signed commands', () => {
  it(
    'deleteProxy equals revokePerpsCredentials',
    async () => {
      await forEachCase(
        RUN,
        'delete-proxy',
        (rng) => ({ s: stamp(rng, false), proxy: rng.bool() ? rng.address() : rng.address().toLowerCase() }),
        async ({ s, proxy: p }) => {
          const sent = await oracle.command(s.ts, s.salt, () => oracle.client.revokePerpsCredentials({ proxy: p }));
          await expectRest(sent, owner, deleteProxy({ proxy: p }), s);
        },
      );
    },
    timeoutFor(RUN, 15),
  );

  it(
    'withdraw equals withdrawFromPerps: any amount below 2^256, ts in seconds, on the withdraw domain',
    async () => {
      await forEachCase(
        RUN,
        'withdraw',
        (rng) => ({ s: stamp(rng, false), amount: BigInt(`0x${rng.hex(rng.int(1, 64))}`) || 1n }),
        async ({ s, amount }) => {
          const sent = await oracle.command(s.ts, s.salt, () => oracle.client.withdrawFromPerps({ amount }));
          const w = oracle.withdraw;
          await expectRest(
            sent,
            owner,
            withdraw({ account: w.account, token: w.token, amount: amount.toString(), to: w.to }),
            s,
          );
        },
      );
    },
    timeoutFor(RUN, 15),
  );

  it(
    'createProxy equals openPerpsSession: a new proxy key for any lifetime, with or without a label',
    async () => {
      await forEachCase(
        RUN,
        'create-proxy',
        (rng) => ({
          s: stamp(rng, false),
          expiresIn: rng.int(1, 400 * 86_400_000),
          label: rng.bool()
            ? Array.from({ length: rng.int(1, 16) }, () => rng.pick(['a', 'Z', '7', ' ', '-', 'é', '€', '😀'])).join('')
            : undefined,
        }),
        async ({ s, expiresIn, label }) => {
          const sent = await oracle.command(s.ts, s.salt, () =>
            oracle.client.openPerpsSession({ expiresIn, ...(label === undefined ? {} : { label }) }),
          );
          const args = (sent.body.op as { args: { proxy: string } }).args;
          const command = createProxy({
            owner: owner.address,
            proxy: args.proxy,
            expiry: s.ts + expiresIn,
            ...(label === undefined ? {} : { label }),
          });
          await expectRest(sent, owner, command, s);
        },
      );
    },
    timeoutFor(RUN, 15),
  );
});

describe('stricter inputs: signed by the official client as given, refused by Countersign', () => {
  /** Decimal texts that are not plain decimals > 0, and JS numbers (the client signs `String(n)`). */
  const LOOSE = [
    '1e5',
    '1E-3',
    '-1',
    '+1',
    '.5',
    '5.',
    '01',
    '00.5',
    ' 1',
    '1 ',
    '',
    'abc',
    'NaN',
    'Infinity',
    '1,5',
    '0x10',
    '0',
    '0.000',
    1e21,
    1e-7,
    0.1 + 0.2,
    5,
  ] as const;

  it(
    'a quantity, price or trigger that is not a plain decimal string',
    async () => {
      await forEachCase(
        RUN,
        'loose-decimal',
        (rng) => ({
          s: stamp(rng),
          entry: { ...order(rng), tif: 'gtc' as const },
          slot: rng.pick(['qty', 'p', 'trp'] as const),
          loose: rng.pick(LOOSE),
        }),
        async ({ s, entry, slot, loose }) => {
          const sdk = {
            ...sdkOrder(entry),
            ...(slot === 'qty' ? { quantity: loose } : {}),
            ...(slot === 'p' ? { price: loose } : {}),
          };
          const request = slot === 'trp' ? { ...sdk, stopLoss: { triggerPrice: loose } } : sdk;
          const sent = await official(s, (session) =>
            session.placeOrder(request as Parameters<PerpsSession['placeOrder']>[0]),
          );
          const args = (sent.body.op as { args: { qty: string; p?: string; tr?: { trp: string } }[] }).args;
          const signedAs = slot === 'qty' ? args[0]!.qty : slot === 'p' ? args[0]!.p : args[1]!.tr!.trp;
          expect(signedAs).toBe(String(loose));
          const leg = {
            iid: entry.iid,
            buy: !entry.buy,
            qty: entry.qty,
            ro: true,
            tr: { tpsl: 'sl' as const, trp: loose as string, market: true },
          };
          const input =
            slot === 'trp' ? { orders: [entry, leg], group: 'order' } : { orders: [{ ...entry, [slot]: loose }] };
          expect(() => createOrders(input as Parameters<typeof createOrders>[0])).toThrow(InvalidFieldError);
        },
      );
    },
    timeoutFor(RUN, 15),
  );

  it(
    'an exp in the past or beyond the 30 s command timeout',
    async () => {
      await forEachCase(
        RUN,
        'exp-window',
        (rng) => {
          const s = stamp(rng, false);
          return { ...s, exp: rng.bool() ? rng.int(1, s.ts) : s.ts + rng.int(30_001, 10 ** 9) };
        },
        async (s) => {
          const sent = await official(s, (session) => session.cancelOrders({ orderIds: [1], expiresAt: s.exp }));
          expect(sent.body.exp).toBe(s.exp);
          await expect(ours(proxy, cancelOrders({ oids: [1] }), s)).rejects.toMatchObject({ field: 'exp' });
        },
      );
    },
    timeoutFor(RUN, 15),
  );

  it(
    'a leverage above 2^31 − 1, an address in mixed case without ' +
      'its checksum, a repeated client order id, a batch over the bound',
    async () => {
      await forEachCase(
        RUN,
        'bounds',
        (rng) => ({
          s: stamp(rng, false),
          kind: rng.pick(['leverage', 'address', 'coid', 'batch'] as const),
          lev: rng.int(0x80000000, Number.MAX_SAFE_INTEGER),
          address: rng.address(),
          coid: rng.hex(32),
        }),
        async ({ s, kind, lev, address, coid }) => {
          if (kind === 'leverage') {
            expect(
              (
                await official(s, (session) =>
                  session.updateLeverage({ instrumentId: 1, leverage: lev, crossMargin: true }),
                )
              ).body.op,
            ).toMatchObject({ args: { lev } });
            expect(() => updateLeverage({ iid: 1, lev, cross: true })).toThrow(InvalidFieldError);
          } else if (kind === 'address') {
            const mixed = [...address.slice(2)].map((ch, i) => (i % 2 ? ch.toUpperCase() : ch.toLowerCase()));
            const bad = `0x${mixed.join('')}`;
            if (bad === getAddress(bad) || bad === bad.toLowerCase()) return;
            expect(
              (await oracle.command(s.ts, s.salt, () => oracle.client.revokePerpsCredentials({ proxy: bad }))).body.op,
            ).toMatchObject({ args: { proxy: bad } });
            expect(() => deleteProxy({ proxy: bad })).toThrow(InvalidFieldError);
          } else {
            const orders =
              kind === 'coid'
                ? [0, 1].map(() => ({ iid: 1, buy: true, qty: '1', tif: 'ioc' as const, c: coid }))
                : Array.from({ length: PERPS_MAX_BATCH + 1 }, () => ({
                    iid: 1,
                    buy: true,
                    qty: '1',
                    tif: 'ioc' as const,
                  }));
            const sent = await official(s, (session) => session.postOrders({ orders: orders.map(sdkOrder) }));
            expect((sent.body.op as { args: unknown[] }).args).toHaveLength(orders.length);
            expect(() => createOrders({ orders })).toThrow(InvalidFieldError);
          }
        },
      );
    },
    timeoutFor(RUN, 15),
  );
});
