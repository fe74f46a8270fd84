/**
 * Demo data of the sandbox: instruments with resting liquidity, order-book markets, catalogue events,
 * and demo accounts with **deterministic, public** keys (sandbox only — never fund them anywhere).
 */
import { keccak256, toHex, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import type { SandboxContext } from './context';
import { PX_SCALE } from './perps/engine';
import { toUnits } from '../decimal';
import type { ClobMarket } from './clob/venue';

const key = (label: string): Hex => keccak256(toHex(`countersign-sandbox:${label}`));

/** What `npm run sandbox` prints and tests use. */
export type DemoAccounts = {
  owner: { address: Address; privateKey: Hex };
  proxy: { address: Address; privateKey: Hex; secret: string; expiry: number };
  counterparty: { address: Address; privateKey: Hex };
  clob: { address: Address; apiKey: string; secret: string; passphrase: string };
};

/** Deterministic, public demo keys (keccak of a label): sandbox only. */
const DEMO_KEYS = {
  owner: key('demo-owner'),
  proxy: key('demo-proxy'),
  counterparty: key('demo-counterparty'),
  maker: key('market-maker'),
};

/**
 * Seeds `ctx` with the demo state: three instruments with a market maker resting 10 levels a side, the
 * demo owner (with a registered proxy and deposits), a counterparty, order-book markets with resting
 * liquidity and the owner's API key. Returns the demo accounts and their keys.
 */
export function seed(ctx: SandboxContext): DemoAccounts {
  const t0 = ctx.now();
  const { venue, clob, config } = ctx;
  const px = (s: string) => toUnits(s, PX_SCALE)!;

  // Perps instruments and a market maker resting 10 levels each side.
  const instruments = [
    { iid: 1, symbol: 'BTC-PERP', tick: '0.5', lot: '0.001', mark: '65000', step: '5', size: '0.25', maxLeverage: 50 },
    { iid: 2, symbol: 'ETH-PERP', tick: '0.05', lot: '0.01', mark: '3120.5', step: '0.5', size: '4', maxLeverage: 50 },
    { iid: 3, symbol: 'SOL-PERP', tick: '0.01', lot: '0.1', mark: '150', step: '0.05', size: '80', maxLeverage: 20 },
  ];
  const mm = privateKeyToAccount(DEMO_KEYS.maker);
  const maker = ctx.openAccount(mm.address, 10n ** 15n);
  for (const i of instruments) {
    venue.addInstrument({
      iid: i.iid,
      symbol: i.symbol,
      tick: px(i.tick),
      lot: px(i.lot),
      mark: px(i.mark),
      maxLeverage: i.maxLeverage,
    });
    maker.config.set(i.iid, { leverage: 50, cross: true });
    const orders = [];
    for (let k = 1; k <= 10; k++) {
      for (const buy of [true, false]) {
        const p = px(i.mark) + (buy ? -1n : 1n) * BigInt(k) * px(i.step);
        orders.push({ iid: i.iid, buy, qty: i.size, p: fromPx(p), tif: 'gtc' as const, po: true });
      }
    }
    venue.placeOrders(maker, orders);
  }

  // Demo owner, its proxy, and a counterparty for transfers.
  const owner = privateKeyToAccount(DEMO_KEYS.owner);
  const proxy = privateKeyToAccount(DEMO_KEYS.proxy);
  const other = privateKeyToAccount(DEMO_KEYS.counterparty);
  const demo = ctx.openAccount(owner.address, 100_000_000_000n);
  const counterparty = ctx.openAccount(other.address, 50_000_000_000n);
  const secret = Buffer.from(keccak256(toHex('countersign-sandbox:demo-proxy-secret'), 'bytes')).toString('base64url');
  const expiry = t0 + 90 * 86_400_000;
  demo.proxies.set(proxy.address.toLowerCase(), { proxy: proxy.address, secret, expiry, label: 'sandbox demo' });
  ctx.proxyIndex.set(proxy.address.toLowerCase(), owner.address.toLowerCase());
  const dep = (n: number, amount: bigint, ageMs: number, confirmations = 12) =>
    demo.deposits.push({
      hash: keccak256(toHex(`deposit-${n}`)),
      asset: 'USDC',
      amount,
      from: other.address,
      to: owner.address,
      requiredConfirmations: confirmations,
      created: t0 - ageMs,
      credited: ageMs >= confirmations * config.depositConfirmationMs,
    });
  dep(1, 25_000_000_000n, 5 * 86_400_000);
  dep(2, 5_000_000_000n, 86_400_000);
  dep(3, 1_500_000_000n, 0); // pending: confirms over 12 × depositConfirmationMs
  const transfer = {
    transfer_id: venue.nextTransferId++,
    asset: 'USDC',
    amount: '250',
    created_timestamp: t0 - 3_600_000,
    label: 'welcome',
  };
  demo.transfers.push({ ...transfer, direction: 'in', counterparty: other.address });
  counterparty.transfers.push({ ...transfer, direction: 'out', counterparty: owner.address });

  // Order-book markets (tokens are decimal uint256 strings) with liquidity from the market maker.
  const tokenId = (label: string) => BigInt(keccak256(toHex(`token:${label}`))).toString();
  const markets: ClobMarket[] = [
    market(1, 101, 'Will the sandbox stay up all day?', 'sandbox-stays-up', '0.01', '5', false),
    market(2, 201, 'Which curve wins the sandbox bake-off? — secp256k1', 'bake-off-secp256k1', '0.001', '5', true),
    market(2, 202, 'Which curve wins the sandbox bake-off? — ed25519', 'bake-off-ed25519', '0.001', '5', true),
    market(3, 301, 'Will a quarter-tick market price exactly?', 'quarter-tick-market', '0.0025', '5', false),
  ];
  function market(
    eventId: number,
    marketId: number,
    question: string,
    slug: string,
    tickSize: string,
    minSize: string,
    negRisk: boolean,
  ): ClobMarket {
    return {
      eventId,
      marketId,
      conditionId: keccak256(toHex(`condition:${slug}`)),
      question,
      slug,
      outcomes: ['Yes', 'No'],
      tokenIds: [tokenId(`${slug}:yes`), tokenId(`${slug}:no`)],
      tickSize,
      minSize,
      negRisk,
      closed: false,
    };
  }
  clob.credit(mm.address, 10n ** 13n);
  for (const m of markets) {
    clob.addMarket(m);
    const tick = toUnits(m.tickSize, 6)!;
    for (const tid of m.tokenIds) {
      clob.creditToken(mm.address, tid, 10n ** 12n);
      for (let k = 1; k <= 5; k++) {
        const mid = 500_000n - (500_000n % tick);
        for (const side of ['BUY', 'SELL'] as const) {
          const price = side === 'BUY' ? mid - BigInt(k) * tick * 2n : mid + BigInt(k) * tick * 2n;
          clob.place({
            id: keccak256(toHex(`mm:${tid}:${side}:${k}`)),
            owner: 'market-maker',
            address: mm.address.toLowerCase(),
            maker: mm.address.toLowerCase(),
            tokenId: tid,
            side,
            price,
            originalSize: BigInt(100 * k) * 1_000_000n,
            orderType: 'GTC',
            postOnly: true,
            expiration: 0,
            created: t0,
          });
        }
      }
    }
  }
  // Demo wallet: collateral, a few outcome tokens, and API credentials at nonce 0.
  clob.credit(owner.address, 10_000_000_000n);
  const [firstMarket] = markets;
  if (firstMarket) clob.creditToken(owner.address, firstMarket.tokenIds[0], 50_000_000n);
  const creds = {
    apiKey: '00000000-0000-4000-8000-00000000c0de',
    secret: Buffer.from(keccak256(toHex('countersign-sandbox:demo-clob-secret'), 'bytes')).toString('base64url') + '=',
    passphrase: keccak256(toHex('countersign-sandbox:demo-clob-passphrase')).slice(2),
    address: owner.address,
    nonce: 0,
  };
  clob.creds.set(creds.apiKey, creds);
  clob.credsByNonce.set(`${owner.address.toLowerCase()}:0`, creds.apiKey);

  return {
    owner: { address: owner.address, privateKey: DEMO_KEYS.owner },
    proxy: { address: proxy.address, privateKey: DEMO_KEYS.proxy, secret, expiry },
    counterparty: { address: other.address, privateKey: DEMO_KEYS.counterparty },
    clob: { address: owner.address, apiKey: creds.apiKey, secret: creds.secret, passphrase: creds.passphrase },
  };
}

function fromPx(units: bigint): string {
  const s = units.toString().padStart(PX_SCALE + 1, '0');
  const int = s.slice(0, -PX_SCALE);
  const frac = s.slice(-PX_SCALE).replace(/0+$/, '');
  return frac ? `${int}.${frac}` : int;
}
