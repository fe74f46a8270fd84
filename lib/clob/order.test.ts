import { describe, expect, it } from 'vitest';
import { hashTypedData, recoverTypedDataAddress } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { toOrderAmounts } from './amounts';
import {
  buildClobOrder,
  CLOB_MAX_BATCH,
  clobOrderDigest,
  clobOrderTypedData,
  exchangeAddress,
  EXCHANGE_V2,
  NEG_RISK_EXCHANGE_V2,
  randomOrderSalt,
  signClobOrder,
  toPostOrderBody,
  toPostOrdersBody,
} from './order';

const account = privateKeyToAccount(generatePrivateKey());
const funder = '0x3333333333333333333333333333333333333333';
const TOKEN = '71321045679252212594626385532706912750332728571942532289631379312455583992563';

function order(signatureType: 0 | 1 | 2 = 0) {
  const amounts = toOrderAmounts({ side: 'BUY', price: '0.56', size: '10', tickSize: '0.01' });
  return buildClobOrder({
    signer: account.address,
    signatureType,
    ...(signatureType === 0 ? {} : { funder }),
    tokenId: TOKEN,
    side: 'BUY',
    makerAmount: amounts.makerAmount,
    takerAmount: amounts.takerAmount,
    timestampMs: 1_751_500_000_123,
    salt: '123456789',
  });
}

describe('buildClobOrder', () => {
  it('type 0: maker = signer; types 1 and 2: maker = funder', () => {
    expect(order(0).maker).toBe(account.address);
    expect(order(1).maker).toBe(funder);
    expect(order(2)).toMatchObject({ maker: funder, signer: account.address, signatureType: 2 });
  });

  it('requires a funder for types 1 and 2 and refuses type 3 for now', () => {
    expect(() => buildClobOrder({ ...order(0), signatureType: 1, timestampMs: 1 })).toThrow(/funder/);
    expect(() => buildClobOrder({ ...order(0), signatureType: 3, timestampMs: 1 })).toThrow(/signatureType/);
  });

  it('draws salts below 2^53', () => {
    for (let i = 0; i < 50; i++) expect(Number(randomOrderSalt())).toBeLessThan(2 ** 53);
  });
});

describe('signClobOrder', () => {
  it.each([0, 1, 2] as const)('signature type %i: digest matches viem, recovers to the signer', async (t) => {
    for (const verifyingContract of [EXCHANGE_V2, NEG_RISK_EXCHANGE_V2]) {
      const input = { chainId: 137, verifyingContract, order: order(t) };
      expect(clobOrderDigest(input)).toBe(hashTypedData(clobOrderTypedData(input)));
      const sig = await signClobOrder(account, input);
      expect(sig).toBe(await account.signTypedData(clobOrderTypedData(input)));
      expect(await recoverTypedDataAddress({ ...clobOrderTypedData(input), signature: sig })).toBe(account.address);
    }
  });

  it('signs differently for the standard and negative-risk exchanges', async () => {
    const a = await signClobOrder(account, { chainId: 137, verifyingContract: exchangeAddress({ negRisk: false }), order: order() });
    const b = await signClobOrder(account, { chainId: 137, verifyingContract: exchangeAddress({ negRisk: true }), order: order() });
    expect(a).not.toBe(b);
  });

  it('refuses to sign for another signer or a malformed field', async () => {
    const other = privateKeyToAccount(generatePrivateKey());
    await expect(signClobOrder(other, { chainId: 137, verifyingContract: EXCHANGE_V2, order: order() })).rejects.toThrow(/order\.signer/);
    await expect(
      signClobOrder(account, { chainId: 137, verifyingContract: EXCHANGE_V2, order: { ...order(), makerAmount: '1.5' } }),
    ).rejects.toThrow(/order\.makerAmount/);
    await expect(
      signClobOrder(account, { chainId: 137, verifyingContract: EXCHANGE_V2, order: { ...order(), side: 'buy' as never } }),
    ).rejects.toThrow(/order\.side/);
  });
});

describe('toPostOrderBody', () => {
  it('has the V2 shape: salt and signatureType numbers, no taker, expiration "0"', async () => {
    const o = order();
    const signature = await signClobOrder(account, { chainId: 137, verifyingContract: EXCHANGE_V2, order: o });
    const body = toPostOrderBody({ order: o, signature, owner: 'api-key', orderType: 'GTC', postOnly: true });
    expect(body).toEqual({
      deferExec: false,
      postOnly: true,
      order: {
        salt: 123456789,
        maker: account.address,
        signer: account.address,
        tokenId: TOKEN,
        makerAmount: '5600000',
        takerAmount: '10000000',
        side: 'BUY',
        signatureType: 0,
        timestamp: '1751500000123',
        expiration: '0',
        metadata: `0x${'0'.repeat(64)}`,
        builder: `0x${'0'.repeat(64)}`,
        signature,
      },
      owner: 'api-key',
      orderType: 'GTC',
    });
    expect('taker' in body.order).toBe(false);
  });

  it('GTD carries a future expiration in seconds; others refuse one', () => {
    const base = { order: order(), signature: '0x00' as const, owner: 'k' };
    expect(toPostOrderBody({ ...base, orderType: 'GTD', expiration: 2_000_000_000, nowMs: 1_751_500_000_000 }).order.expiration).toBe('2000000000');
    expect(() => toPostOrderBody({ ...base, orderType: 'GTD', expiration: 1_000, nowMs: 1_751_500_000_000 })).toThrow(/expiration/);
    expect(() => toPostOrderBody({ ...base, orderType: 'GTC', expiration: 2_000_000_000 })).toThrow(/expiration/);
  });

  it('refuses postOnly with FOK and FAK', () => {
    const base = { order: order(), signature: '0x00' as const, owner: 'k', postOnly: true };
    expect(() => toPostOrderBody({ ...base, orderType: 'FOK' })).toThrow(/postOnly/);
    expect(() => toPostOrderBody({ ...base, orderType: 'FAK' })).toThrow(/postOnly/);
  });

  it('batches 1 to 15 orders', () => {
    const one = toPostOrderBody({ order: order(), signature: '0x00', owner: 'k', orderType: 'GTC' });
    expect(toPostOrdersBody(Array(CLOB_MAX_BATCH).fill(one))).toHaveLength(15);
    expect(() => toPostOrdersBody([])).toThrow(/orders/);
    expect(() => toPostOrdersBody(Array(16).fill(one))).toThrow(/at most 15/);
  });
});
