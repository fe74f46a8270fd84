import { describe, expect, it } from 'vitest';
import { hashTypedData, recoverTypedDataAddress, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { toOrderAmounts } from './amounts';
import { uupsDepositWallet } from '../relayer/wallet';
import {
  buildClobOrder,
  depositWalletOrderTypedData,
  depositWalletSignatureExpected,
  splitDepositWalletSignature,
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

  it('requires a funder for types 1, 2 and 3; type 3: maker = signer = the deposit wallet', () => {
    expect(() => buildClobOrder({ ...order(0), signatureType: 1, timestampMs: 1 })).toThrow(/funder/);
    expect(() => buildClobOrder({ ...order(0), signatureType: 3, timestampMs: 1 })).toThrow(/funder/);
    expect(buildClobOrder({ ...order(0), signatureType: 3, funder, timestampMs: 1 })).toMatchObject({
      maker: funder,
      signer: funder,
      signatureType: 3,
    });
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
    const a = await signClobOrder(account, {
      chainId: 137,
      verifyingContract: exchangeAddress({ negRisk: false }),
      order: order(),
    });
    const b = await signClobOrder(account, {
      chainId: 137,
      verifyingContract: exchangeAddress({ negRisk: true }),
      order: order(),
    });
    expect(a).not.toBe(b);
  });

  it('refuses to sign for another signer or a malformed field', async () => {
    const other = privateKeyToAccount(generatePrivateKey());
    await expect(
      signClobOrder(other, { chainId: 137, verifyingContract: EXCHANGE_V2, order: order() }),
    ).rejects.toThrow(/order\.signer/);
    await expect(
      signClobOrder(account, {
        chainId: 137,
        verifyingContract: EXCHANGE_V2,
        order: { ...order(), makerAmount: '1.5' },
      }),
    ).rejects.toThrow(/order\.makerAmount/);
    await expect(
      signClobOrder(account, {
        chainId: 137,
        verifyingContract: EXCHANGE_V2,
        order: { ...order(), side: 'buy' as never },
      }),
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
    expect(
      toPostOrderBody({ ...base, orderType: 'GTD', expiration: 2_000_000_000, nowMs: 1_751_500_000_000 }).order
        .expiration,
    ).toBe('2000000000');
    expect(() => toPostOrderBody({ ...base, orderType: 'GTD', expiration: 1_000, nowMs: 1_751_500_000_000 })).toThrow(
      /expiration/,
    );
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

describe('signClobOrder, type 3 (deposit wallet; PROTOCOL.md §4.5)', () => {
  const KEY = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80';
  const owner = privateKeyToAccount(KEY);
  const wallet = '0xdf8b9E8f9AB23f261F6e1B171B7454ae6E46Ba76';
  const REF_TOKEN = '71321045679252212594626385532706912750332728571942532289631379312455583992563';
  const refOrder = () =>
    buildClobOrder({
      signer: owner.address,
      signatureType: 3,
      funder: wallet,
      tokenId: REF_TOKEN,
      side: 'BUY',
      makerAmount: '4200000',
      takerAmount: '10000000',
      timestampMs: 1_767_225_600_000,
      salt: '479249096354',
    });
  const refInput = () => ({ chainId: 137, verifyingContract: EXCHANGE_V2, order: refOrder() });

  it('reproduces the reference vector byte for byte', async () => {
    const input = refInput();
    expect(clobOrderDigest(input)).toBe('0x2a59663c464f099658fb273f7b4e046a8394f83a2317244025f982df19356a18');
    expect(hashTypedData(depositWalletOrderTypedData(input))).toBe(
      '0x4ffa95e1c15effd97d5a4009ea840d3667bde9be439e5e81631422e0efacb857',
    );
    const sig = await signClobOrder(owner, input);
    expect(sig.length).toBe(2 + 2 * 317);
    expect(sig.slice(0, 132)).toBe(
      '0x5b0448b3726b1c12f15e7c65a39344925a03b71d9945f8800156180c0beca3bd' +
        '436dac5f4cc8a038ab322aa96c7ebb4c541a5c5743bedddffb03fe56f293ffa01c',
    );
    expect(`0x${sig.slice(132, 196)}`).toBe('0x3264e159346253e26a64e00b69032db0e7d32f94628de3e6eecb50304d7af3d2');
    expect(`0x${sig.slice(196, 260)}`).toBe('0xd4f67a7d607c78c671260c13467cf8982358c3c8cf6cc43a6d525898be781c44');
    expect(Buffer.from(sig.slice(260, 632), 'hex').toString()).toBe(
      'Order(uint256 salt,address maker,address signer,uint256 tokenId,uint256 makerAmount,uint256 ' +
        'takerAmount,uint8 side,uint8 signatureType,uint256 timestamp,bytes32 metadata,bytes32 builder)',
    );
    expect(sig.slice(632)).toBe('00ba');
    // The inner signature is the viem signTypedData of TypedDataSign and recovers to the owner.
    expect(sig.slice(0, 132)).toBe(await owner.signTypedData(depositWalletOrderTypedData(input)));
  });

  it('splits its own signature and carries the expected separator and contents (V2, neg-risk, V3)', async () => {
    const inputs = [
      refInput(),
      { ...refInput(), verifyingContract: NEG_RISK_EXCHANGE_V2 },
      {
        ...refInput(),
        verifyingContract: '0xe3333700cA9d93003F00f0F71f8515005F6c00Aa' as const,
        domainVersion: '3' as const,
      },
    ];
    const sigs = new Set<string>();
    for (const input of inputs) {
      const sig = await signClobOrder(owner, input);
      sigs.add(sig);
      const parts = splitDepositWalletSignature(sig);
      expect(parts).toMatchObject(depositWalletSignatureExpected(input));
      expect(await recoverTypedDataAddress({ ...depositWalletOrderTypedData(input), signature: parts!.innerSig })).toBe(
        owner.address,
      );
    }
    expect(sigs.size).toBe(3);
  });

  it(
    "refuses another key's deposit wallet, a maker that " + 'is not the wallet, and a 65-byte signature as type 3',
    async () => {
      const stranger = privateKeyToAccount(generatePrivateKey());
      await expect(signClobOrder(stranger, refInput())).rejects.toThrow(/order\.signer/);
      await expect(
        signClobOrder(owner, { ...refInput(), order: { ...refOrder(), maker: owner.address } }),
      ).rejects.toThrow(/order\.maker/);
      expect(splitDepositWalletSignature(`0x${'11'.repeat(65)}` as Hex)).toBeUndefined();
      const sig = await signClobOrder(owner, refInput());
      expect(splitDepositWalletSignature(`${sig.slice(0, -4)}00bb` as Hex)).toBeUndefined();
      expect(uupsDepositWallet(owner.address, 137)).toBe(wallet);
    },
  );
});
