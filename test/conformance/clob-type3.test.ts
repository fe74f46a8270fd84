/**
 * The official order-book client (`@polymarket/clob-client-v2` 1.1.0) with `signatureType: 3` against the
 * sandbox: a new API user's deposit wallet deployed and approved through the official relayer
 * client; no approval → "not enough balance / allowance"; API key, post (limit, market, neg-risk), read,
 * cancel, balance-allowance; our type-3 signatures byte-identical to the official client's (V2 standard,
 * neg-risk, V3); a resolved market's position turns redeemable and a redeem batch pays out.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AssetType, ClobClient, OrderType, Side } from '@polymarket/clob-client-v2';
import type { Hex, LocalAccount } from 'viem';
import { startHarness, type Harness } from '../kits/sandbox';
import { signClobOrder, type ClobOrder } from '../../lib/clob/order';
import { venueContracts } from '../../lib/relayer/contracts';
import { CHAIN, deadline, newDepositUser, redeemCall, setupCalls, type DepositUser } from './deposit-kit';

let h: Harness;
let u: DepositUser;
let wallet: string;
let client: ClobClient;
let creds: { key: string; secret: string; passphrase: string };

const mined = async (resp: { wait: () => Promise<unknown> }) => {
  h.clock.advance(2 * h.ctx.config.relayerMineMs);
  return resp.wait();
};
const binary = () => h.ctx.clob.markets.find((m) => !m.negRisk)!;
const negRisk = () => h.ctx.clob.markets.find((m) => m.negRisk)!;

beforeAll(async () => {
  h = await startHarness();
  u = await newDepositUser(h);
  wallet = await u.relay.deriveDepositWalletAddress();
  await mined(await u.relay.deployDepositWallet());
  // The type-3 client with the wallet as funder gets its API key itself, as a new API user's code does
  // (createOrDeriveApiKey: the key the kit's first call created is derived again, not a second one).
  const own = new ClobClient({
    host: h.clobUrl,
    chain: CHAIN,
    signer: u.wallet,
    signatureType: 3,
    funderAddress: wallet,
    useServerTime: true,
  });
  creds = await own.createOrDeriveApiKey();
  client = new ClobClient({
    host: h.clobUrl,
    chain: CHAIN,
    signer: u.wallet,
    creds,
    signatureType: 3,
    funderAddress: wallet,
    useServerTime: true,
    throwOnError: true,
  });
});
afterAll(async () => {
  await h?.close();
});

/** Our signature of the official client's signed order (same fields), for the byte comparison. */
async function ours(order: object, verifyingContract: Hex, domainVersion: '2' | '3' = '2') {
  const signed = order as V2Signed;
  return oursOf(signed, verifyingContract, domainVersion);
}

type V2Signed = {
  salt: string | number;
  maker: string;
  signer: string;
  tokenId: string;
  makerAmount: string;
  takerAmount: string;
  side: string | number;
  timestamp: string;
  metadata: string;
  builder: string;
};

async function oursOf(signed: V2Signed, verifyingContract: Hex, domainVersion: '2' | '3') {
  const order: ClobOrder = {
    salt: String(signed.salt),
    maker: signed.maker as Hex,
    signer: signed.signer as Hex,
    tokenId: signed.tokenId,
    makerAmount: signed.makerAmount,
    takerAmount: signed.takerAmount,
    side: signed.side === 'BUY' || signed.side === 0 ? 'BUY' : 'SELL',
    signatureType: 3,
    timestamp: signed.timestamp,
    metadata: signed.metadata as Hex,
    builder: signed.builder as Hex,
  };
  const account = u.wallet.account as LocalAccount;
  return signClobOrder(account, { chainId: CHAIN, verifyingContract, order, domainVersion });
}

describe('official CLOB client, signature type 3, against the sandbox', () => {
  it(
    'creates or derives its own API key with signatureType 3: ' +
      'one key per account, the one it signs L2 requests with',
    async () => {
      expect(creds.key).toBe(u.l2.creds!.key);
      expect(creds.secret).toBe(u.l2.creds!.secret);
      const listed = (await client.getApiKeys()) as unknown as { apiKeys: string[] };
      expect(listed.apiKeys).toEqual([creds.key]);
    },
  );

  it('refuses an order before the wallet approved the exchange: not enough balance / allowance', async () => {
    await expect(
      client.createAndPostOrder(
        { tokenID: binary().tokenIds[0], price: 0.3, size: 10, side: Side.BUY },
        undefined,
        OrderType.GTC,
      ),
    ).rejects.toThrow(/not enough balance \/ allowance/);
  });

  it(
    'after the approval batch: balance-allowance with ' + 'signature_type=3 shows the wallet and its allowances',
    async () => {
      await mined(await u.relay.executeDepositWalletBatch(setupCalls(), wallet, deadline(h)));
      const c = await client.getBalanceAllowance({ asset_type: AssetType.COLLATERAL });
      expect(BigInt(c.balance)).toBe(h.ctx.config.newAccountBalance);
      expect(c.allowances[venueContracts(CHAIN).exchangeV2]).toBe(((1n << 256n) - 1n).toString());
    },
  );

  it('signs byte-identically to our signer (V2 standard, neg-risk, V3)', async () => {
    const c = venueContracts(CHAIN);
    const std = await client.createOrder({ tokenID: binary().tokenIds[0], price: 0.3, size: 10, side: Side.BUY });
    expect(std.signature).toHaveLength(2 + 634);
    expect(await ours(std, c.exchangeV2)).toBe(std.signature);
    const nr = await client.createOrder({ tokenID: negRisk().tokenIds[0], price: 0.2, size: 10, side: Side.BUY });
    expect(await ours(nr, c.negRiskExchangeV2)).toBe(nr.signature);
    const v3 = await client.orderBuilder.buildExchangeV3OrderFromAmounts({
      tokenID: binary().tokenIds[0],
      makerAmount: '3000000',
      takerAmount: '10000000',
      side: Side.BUY,
    });
    expect(await ours(v3, c.exchangeV3, '3')).toBe(v3.signature);
  });

  it('posts, reads and cancels limit orders (standard and neg-risk); the maker is the deposit wallet', async () => {
    const [yes] = binary().tokenIds;
    const o = await client.createAndPostOrder(
      { tokenID: yes, price: 0.3, size: 10, side: Side.BUY },
      undefined,
      OrderType.GTC,
    );
    expect(o).toMatchObject({ success: true, status: 'live' });
    expect(await client.getOrder(o.orderID)).toMatchObject({
      id: o.orderID,
      status: 'LIVE',
      maker_address: wallet.toLowerCase(),
    });
    const nr = await client.createAndPostOrder(
      { tokenID: negRisk().tokenIds[0], price: 0.2, size: 10, side: Side.BUY },
      undefined,
      OrderType.GTC,
    );
    expect(nr).toMatchObject({ success: true, status: 'live' });
    expect((await client.getOpenOrders()).map((x: { id: string }) => x.id)).toEqual(
      expect.arrayContaining([o.orderID, nr.orderID]),
    );
    expect((await client.cancelOrder({ orderID: o.orderID })).canceled).toEqual([o.orderID]);
    expect((await client.cancelAll()).canceled).toEqual([nr.orderID]);
  });

  it('fills a market BUY and sells part back (outcome-token approval)', async () => {
    const [yes] = binary().tokenIds;
    expect(
      await client.createAndPostMarketOrder({ tokenID: yes, amount: 10, side: Side.BUY }, undefined, OrderType.FOK),
    ).toMatchObject({ success: true, status: 'matched' });
    expect(h.ctx.clob.tokenBalance(wallet, yes)).toBeGreaterThan(0n);
    expect(
      await client.createAndPostMarketOrder({ tokenID: yes, amount: 5, side: Side.SELL }, undefined, OrderType.FAK),
    ).toMatchObject({ success: true, status: 'matched' });
    expect(await client.getTrades()).not.toHaveLength(0);
  });

  it('refuses a type-3 order whose wallet is not the API key owner’s', async () => {
    const other = await newDepositUser(h);
    const stranger = new ClobClient({
      host: h.clobUrl,
      chain: CHAIN,
      signer: other.wallet,
      creds: other.l2.creds!,
      signatureType: 3,
      funderAddress: wallet,
      useServerTime: true,
      throwOnError: true,
    });
    await expect(
      stranger.createAndPostOrder(
        { tokenID: binary().tokenIds[0], price: 0.3, size: 10, side: Side.BUY },
        undefined,
        OrderType.GTC,
      ),
    ).rejects.toThrow(/the order signer address has to be the address of the API KEY/);
  });

  it('redeems a resolved position through a batch: redeemable, then paid out', async () => {
    const m = binary();
    const held = h.ctx.clob.tokenBalance(wallet, m.tokenIds[0]);
    const before = h.ctx.clob.balanceOf(wallet);
    const early = await u.relay.executeDepositWalletBatch([redeemCall(m.conditionId)], wallet, deadline(h));
    expect(await mined(early)).toBeUndefined();
    expect((await early.getTransaction())[0]).toMatchObject({
      state: 'STATE_FAILED',
      errorMsg: 'result for condition not received yet',
    });
    expect(
      (
        await fetch(`${h.url}/admin/resolve`, {
          method: 'POST',
          body: JSON.stringify({ condition_id: m.conditionId, winner: 0 }),
        })
      ).status,
    ).toBe(200);
    const pos = (await (await fetch(`${h.url}/data/v2/positions?user=${wallet}`)).json()) as {
      data: { token_id: string; redeemable: boolean }[];
    };
    expect(pos.data.find((p) => p.token_id === m.tokenIds[0])).toMatchObject({ redeemable: true });
    await mined(await u.relay.executeDepositWalletBatch([redeemCall(m.conditionId)], wallet, deadline(h)));
    expect(h.ctx.clob.tokenBalance(wallet, m.tokenIds[0])).toBe(0n);
    expect(h.ctx.clob.balanceOf(wallet)).toBe(before + held);
  });
});
