import { describe, expect, it } from 'vitest';
import { hashTypedData, recoverTypedDataAddress } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { cancelOrders, createOrders, createProxy, withdraw } from './commands';
import {
  compact,
  createProxyDigest,
  createProxyTypedData,
  hashPerpsOp,
  perpsOpDigest,
  perpsOpTypedData,
  signCreateProxy,
  signPerpsOp,
  signWithdraw,
  withdrawDigest,
  withdrawTypedData,
} from './signing';

// PROTOCOL.md §1.5 reference value.
const REF_KEY = '0x0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef';
const REF_DOMAIN = { name: 'Polymarket', version: '1', chainId: 137 };
const domain = REF_DOMAIN;
const withdrawDomain = { ...REF_DOMAIN, verifyingContract: '0x1111111111111111111111111111111111111111' as const };

describe('hashPerpsOp', () => {
  it('reproduces the PROTOCOL.md §1.5 data hash', () => {
    expect(hashPerpsOp(['cancelOrders', [11, 22, 33]])).toBe(
      '0x13f4659952efbcd144324c0a1c50cb75069635b2bbf28d3cc1e51b6e176a7617',
    );
  });

  it('hashes the command builder tuple the same as the literal tuple', () => {
    expect(hashPerpsOp(cancelOrders({ oids: [11, 22, 33] }).op)).toBe(hashPerpsOp(['cancelOrders', [11, 22, 33]]));
  });

  it('compacts undefined slots away but keeps false, 0 and ""', () => {
    expect(compact(['a', [0, undefined, false, null, '', [undefined, 1]]])).toEqual(['a', [0, false, '', [1]]]);
    const withHoles = createOrders({ orders: [{ iid: 1, buy: true, qty: '1', tif: 'ioc' }] }).op;
    expect(hashPerpsOp(withHoles)).toBe(hashPerpsOp(['createOrders', [[1, true, '1', 'ioc', false]]]));
  });

  it('changes when any signed field changes', () => {
    const a = createOrders({ orders: [{ iid: 1, buy: true, qty: '1', p: '100', tif: 'gtc' }] }).op;
    const b = createOrders({ orders: [{ iid: 1, buy: true, qty: '1', p: '100.0', tif: 'gtc' }] }).op;
    const c = createOrders({ orders: [{ iid: 1, buy: false, qty: '1', p: '100', tif: 'gtc' }] }).op;
    expect(new Set([hashPerpsOp(a), hashPerpsOp(b), hashPerpsOp(c)]).size).toBe(3);
  });
});

describe('signPerpsOp', () => {
  it('reproduces the PROTOCOL.md §1.5 signature', async () => {
    const sig = await signPerpsOp(privateKeyToAccount(REF_KEY), {
      domain: REF_DOMAIN,
      op: ['cancelOrders', [11, 22, 33]],
      salt: 999,
      ts: 1751500000003,
    });
    expect(sig).toBe(
      '0xb97be11bcffaca178b29ecc42cabc732d0f436fad42a42e3a63f32131b347be5' +
        '11d452b14a81bdefc7cfda84bf83c94afedfb16fd8df16883cf6e261e411dfe91c',
    );
  });

  it('computes the same digest as viem hashTypedData', () => {
    const input = {
      domain,
      op: createOrders({ orders: [{ iid: 7, buy: true, qty: '2.5', p: '3120.50', tif: 'gtc', po: true }] }).op,
      salt: 4294967295,
      ts: 1751500000003,
    };
    expect(perpsOpDigest(input)).toBe(hashTypedData(perpsOpTypedData(input)));
  });

  it('matches viem signTypedData and recovers to the signer', async () => {
    const account = privateKeyToAccount(generatePrivateKey());
    const input = { domain, op: cancelOrders({ oids: [1] }).op, salt: 1, ts: 2 };
    const sig = await signPerpsOp(account, input);
    expect(sig).toBe(await account.signTypedData(perpsOpTypedData(input)));
    expect(await recoverTypedDataAddress({ ...perpsOpTypedData(input), signature: sig })).toBe(account.address);
  });

  it('falls back to signTypedData for an account without a raw sign', async () => {
    const account = privateKeyToAccount(REF_KEY);
    const noRaw = { ...account, sign: undefined };
    const input = { domain: REF_DOMAIN, op: ['cancelOrders', [11, 22, 33]] as const, salt: 999, ts: 1751500000003 };
    expect(await signPerpsOp(noRaw, input)).toBe(await signPerpsOp(account, input));
  });

  it('refuses a negative or unsafe salt / ts', async () => {
    const account = privateKeyToAccount(REF_KEY);
    await expect(signPerpsOp(account, { domain, op: ['cancelOrders', [1]], salt: -1, ts: 1 })).rejects.toThrow(/salt/);
    await expect(signPerpsOp(account, { domain, op: ['cancelOrders', [1]], salt: 1, ts: 2 ** 60 })).rejects.toThrow(
      /ts/,
    );
  });
});

describe('signCreateProxy', () => {
  it('matches viem and recovers to the owner', async () => {
    const owner = privateKeyToAccount(generatePrivateKey());
    const proxy = privateKeyToAccount(generatePrivateKey()).address;
    const cmd = createProxy({ owner: owner.address, proxy, expiry: 1_900_000_000_000 });
    const input = { domain, proxy, expiry: cmd.createProxy!.expiry, salt: 77, ts: 1_800_000_000_000 };
    expect(createProxyDigest(input)).toBe(hashTypedData(createProxyTypedData(input)));
    const sig = await signCreateProxy(owner, input);
    expect(sig).toBe(await owner.signTypedData(createProxyTypedData(input)));
    expect(await recoverTypedDataAddress({ ...createProxyTypedData(input), signature: sig })).toBe(owner.address);
  });
});

describe('signWithdraw', () => {
  it('signs the Withdraw struct (fee 0, ts seconds) on the withdraw domain', async () => {
    const owner = privateKeyToAccount(generatePrivateKey());
    const cmd = withdraw({
      account: owner.address,
      token: '0xc011a7e12a19f7b1f670d46f03b03f3342e82dfb',
      amount: '10000000',
      to: '0x99999999999999999999999999999999999999a4',
    });
    const input = { domain: withdrawDomain, ...cmd.withdraw!, salt: 5, ts: 1_751_500_000 };
    expect(withdrawDigest(input)).toBe(hashTypedData(withdrawTypedData(input)));
    expect(withdrawTypedData(input).message.fee).toBe(0n);
    const sig = await signWithdraw(owner, input);
    expect(sig).toBe(await owner.signTypedData(withdrawTypedData(input)));
    expect(await recoverTypedDataAddress({ ...withdrawTypedData(input), signature: sig })).toBe(owner.address);
  });

  it('gives a different digest on the command domain (no verifyingContract)', () => {
    const cmd = withdraw({
      account: '0x' + '1'.repeat(40),
      token: '0x' + '2'.repeat(40),
      amount: '1',
      to: '0x' + '3'.repeat(40),
    });
    const base = { ...cmd.withdraw!, salt: 1, ts: 1 };
    expect(withdrawDigest({ ...base, domain: withdrawDomain })).not.toBe(
      withdrawDigest({
        ...base,
        domain: { ...withdrawDomain, verifyingContract: '0x2222222222222222222222222222222222222222' },
      }),
    );
  });
});
