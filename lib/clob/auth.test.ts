import { describe, expect, it } from 'vitest';
import { hashTypedData, recoverTypedDataAddress } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import {
  buildL1Headers,
  buildL2Headers,
  buildL2Signature,
  clobAuthDigest,
  clobAuthTypedData,
  decodeBase64Secret,
  l2SignaturesEqual,
  signClobAuth,
} from './auth';

const REF_KEY = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80';

describe('signClobAuth', () => {
  it('reproduces the PROTOCOL.md §2.1 reference signature', async () => {
    const sig = await signClobAuth(privateKeyToAccount(REF_KEY), { chainId: 80002, timestamp: 10000000, nonce: 23 });
    expect(sig).toBe(
      '0xf62319a987514da40e57e2f4d7529f7bac38f0355bd88bb5adbb3768d80de6c1' +
        '682518e0af677d5260366425f4361e7b70c25ae232aff0ab2331e2b164a1aedc1b',
    );
  });

  it('agrees with viem hashTypedData and recovers to the wallet', async () => {
    const account = privateKeyToAccount(REF_KEY);
    const input = { chainId: 137, timestamp: 1_751_500_000, nonce: 0 };
    expect(clobAuthDigest(account.address, input)).toBe(hashTypedData(clobAuthTypedData(account.address, input)));
    const sig = await signClobAuth(account, input);
    expect(await recoverTypedDataAddress({ ...clobAuthTypedData(account.address, input), signature: sig })).toBe(
      account.address,
    );
  });

  it('refuses a negative nonce or a millisecond-looking float timestamp', async () => {
    const account = privateKeyToAccount(REF_KEY);
    await expect(signClobAuth(account, { chainId: 137, timestamp: 1, nonce: -1 })).rejects.toThrow(/nonce/);
    await expect(signClobAuth(account, { chainId: 137, timestamp: 1.5, nonce: 0 })).rejects.toThrow(/timestamp/);
  });
});

describe('buildL1Headers', () => {
  it('gives the four headers with seconds and nonce as strings', async () => {
    const account = privateKeyToAccount(REF_KEY);
    const h = await buildL1Headers(account, { chainId: 80002, timestamp: 10000000, nonce: 23 });
    expect(Object.keys(h)).toEqual(['SVC_ADDRESS', 'SVC_SIGNATURE', 'SVC_TIMESTAMP', 'SVC_NONCE']);
    expect(h.SVC_ADDRESS).toBe(account.address);
    expect(h.SVC_TIMESTAMP).toBe('10000000');
    expect(h.SVC_NONCE).toBe('23');
    expect(h.SVC_SIGNATURE.startsWith('0xf62319a9')).toBe(true);
  });
});

describe('buildL2Signature', () => {
  it('reproduces the PROTOCOL.md §2.2 reference HMAC', async () => {
    expect(
      await buildL2Signature({
        secret: 'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=',
        timestamp: 1000000,
        method: 'test-sign',
        requestPath: '/orders',
        body: '{"hash": "0x123"}',
      }),
    ).toBe('ZwAdJKvoYRlEKDkNMwd5BuwNNtg93kNaR_oU2HrfVvc=');
  });

  it('accepts a url-safe secret without padding and gives the same result', async () => {
    const input = { timestamp: 1, method: 'POST', requestPath: '/order?x=1', body: '{}' };
    const std = await buildL2Signature({ ...input, secret: 'ab+/cd+/ef8=' });
    expect(await buildL2Signature({ ...input, secret: 'ab-_cd-_ef8' })).toBe(std);
  });

  it('signs the path without its query string (PROTOCOL.md §2.2), and changes with the path and the body', async () => {
    const base = { secret: 'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=', timestamp: 5, method: 'GET' };
    const a = await buildL2Signature({ ...base, requestPath: '/data/orders' });
    const b = await buildL2Signature({ ...base, requestPath: '/data/orders?market=1&next_cursor=MA==' });
    const c = await buildL2Signature({ ...base, requestPath: '/data/orders', body: '' });
    expect(b).toBe(a);
    expect(c).toBe(a);
    expect(await buildL2Signature({ ...base, requestPath: '/data/trades' })).not.toBe(a);
    expect(await buildL2Signature({ ...base, requestPath: '/data/orders', body: '{}' })).not.toBe(a);
  });

  it('refuses a secret that is not base64', async () => {
    await expect(
      buildL2Signature({ secret: 'not base64!', timestamp: 1, method: 'GET', requestPath: '/' }),
    ).rejects.toThrow(/secret/);
    expect(() => decodeBase64Secret('A')).toThrow(/secret/);
  });
});

describe('buildL2Headers', () => {
  it('gives the five headers, the signature over the exact body text', () => {
    const credentials = { apiKey: 'k-1', secret: 'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=', passphrase: 'pp' };
    const address = privateKeyToAccount(REF_KEY).address;
    const h = buildL2Headers({
      address,
      credentials,
      timestamp: 1000000,
      method: 'test-sign',
      requestPath: '/orders',
      body: '{"hash": "0x123"}',
    });
    expect(h).toEqual({
      SVC_ADDRESS: address,
      SVC_SIGNATURE: 'ZwAdJKvoYRlEKDkNMwd5BuwNNtg93kNaR_oU2HrfVvc=',
      SVC_TIMESTAMP: '1000000',
      SVC_API_KEY: 'k-1',
      SVC_PASSPHRASE: 'pp',
    });
    expect(l2SignaturesEqual(h.SVC_SIGNATURE, 'ZwAdJKvoYRlEKDkNMwd5BuwNNtg93kNaR_oU2HrfVvc=')).toBe(true);
    expect(l2SignaturesEqual(h.SVC_SIGNATURE, 'ZwAdJKvoYRlEKDkNMwd5BuwNNtg93kNaR_oU2HrfVvd=')).toBe(false);
  });
});
