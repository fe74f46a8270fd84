/**
 * The sandbox relayer's state machine (PROTOCOL.md §4.4), stepped by the sandbox clock and read
 * back from `GET /relayer/transaction` as a client polls it: a `WALLET-CREATE` goes NEW → EXECUTED (half
 * the mining time) → MINED (its hash appears, the wallet is deployed) → CONFIRMED (twice the mining time);
 * a batch whose effect fails when mined goes NEW → EXECUTED → FAILED with the reason and changes nothing;
 * a batch with a stale nonce is INVALID at once, with the reason, and stays so.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeFunctionData, parseAbi, type Address } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { startHarness, type Harness } from '../../test/kits/sandbox';
import { builderHeaders } from '../relayer/builder';
import { signWalletBatch, walletCreateRequest, type WalletCall } from '../relayer/batch';
import { venueContracts } from '../relayer/contracts';
import { uupsDepositWallet } from '../relayer/wallet';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

const BUILDER = {
  key: 'state-machine-builder',
  secret: Buffer.from('a builder secret of 32 bytes....').toString('base64'),
  passphrase: 'pass',
};
const owner = privateKeyToAccount('0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d');
const recipient: Address = '0x6666666666666666666666666666666666666666';
const mineMs = () => h.ctx.config.relayerMineMs;
type Row = { transactionID: string; state: string; transactionHash: string; errorMsg?: string; type: string };

/** POSTs `body` to the relayer's `/submit` with builder headers; the answer. */
async function submit(body: unknown): Promise<{ transactionID: string; state: string; errorMsg?: string }> {
  const text = JSON.stringify(body);
  const headers = {
    'content-type': 'application/json',
    ...builderHeaders(BUILDER, {
      timestamp: Math.floor(h.clock.now / 1000),
      method: 'POST',
      path: '/submit',
      body: text,
    }),
  };
  const r = await fetch(`${h.url}/relayer/submit`, { method: 'POST', headers, body: text });
  expect(r.status).toBe(200);
  return (await r.json()) as { transactionID: string; state: string; errorMsg?: string };
}
/** The row `GET /relayer/transaction?id=` answers now. */
async function row(id: string): Promise<Row> {
  const rows = (await (await fetch(`${h.url}/relayer/transaction?id=${id}`)).json()) as Row[];
  expect(rows).toHaveLength(1);
  return rows[0]!;
}
const deployed = async (wallet: string) =>
  ((await (await fetch(`${h.url}/relayer/deployed?address=${wallet}`)).json()) as { deployed: boolean }).deployed;
const nonce = async () =>
  ((await (await fetch(`${h.url}/relayer/nonce?address=${owner.address}&type=WALLET`)).json()) as { nonce: string })
    .nonce;
/** A signed WALLET batch of `calls` with the relayer's nonce (or `n`). */
async function walletBatch(calls: WalletCall[], n?: string) {
  const chainId = h.ctx.config.clobChainId;
  return signWalletBatch(owner, {
    chainId,
    wallet: uupsDepositWallet(owner.address, chainId),
    nonce: n ?? (await nonce()),
    deadline: String(Math.floor(h.clock.now / 1000) + 600),
    calls,
  });
}

describe('sandbox relayer: the state machine, stepped by the clock and read from /transaction', () => {
  beforeAll(() => {
    h.ctx.relayerChain.builderKeys.set(BUILDER.key, {
      ...BUILDER,
      owner: owner.address.toLowerCase(),
      createdAt: h.clock.now,
      revokedAt: null,
    });
  });

  it('WALLET-CREATE: NEW → EXECUTED → MINED (hash, deployed) → CONFIRMED', async () => {
    const wallet = uupsDepositWallet(owner.address, h.ctx.config.clobChainId);
    const sub = await submit(walletCreateRequest(owner.address, h.ctx.config.clobChainId));
    expect(sub.state).toBe('STATE_NEW');
    expect(await row(sub.transactionID)).toMatchObject({
      state: 'STATE_NEW',
      transactionHash: '',
      type: 'WALLET-CREATE',
    });
    h.clock.advance(mineMs() / 2 - 1);
    expect((await row(sub.transactionID)).state).toBe('STATE_NEW');
    h.clock.advance(1);
    expect(await row(sub.transactionID)).toMatchObject({ state: 'STATE_EXECUTED', transactionHash: '' });
    expect(await deployed(wallet)).toBe(false);
    h.clock.advance(mineMs() / 2);
    const mined = await row(sub.transactionID);
    expect(mined).toMatchObject({ state: 'STATE_MINED', transactionHash: expect.stringMatching(/^0x[0-9a-f]{64}$/) });
    expect(mined.errorMsg).toBeUndefined();
    expect(await deployed(wallet)).toBe(true);
    h.clock.advance(mineMs());
    expect(await row(sub.transactionID)).toMatchObject({
      state: 'STATE_CONFIRMED',
      transactionHash: mined.transactionHash,
    });
  });

  it('a WALLET batch that fails when mined: NEW → EXECUTED → FAILED with the reason; nothing moves', async () => {
    const c = venueContracts(h.ctx.config.clobChainId);
    const wallet = uupsDepositWallet(owner.address, h.ctx.config.clobChainId).toLowerCase();
    const balance = h.ctx.clob.balanceOf(wallet);
    const data = encodeFunctionData({
      abi: parseAbi(['function transfer(address to, uint256 amount)']),
      functionName: 'transfer',
      args: [recipient, balance + 1n],
    });
    const sub = await submit(await walletBatch([{ target: c.collateral, value: '0', data }]));
    expect((await row(sub.transactionID)).state).toBe('STATE_NEW');
    h.clock.advance(mineMs() / 2);
    expect((await row(sub.transactionID)).state).toBe('STATE_EXECUTED');
    h.clock.advance(mineMs() / 2);
    expect(await row(sub.transactionID)).toMatchObject({
      state: 'STATE_FAILED',
      errorMsg: 'ERC20: transfer amount exceeds balance',
    });
    h.clock.advance(2 * mineMs());
    expect(await row(sub.transactionID)).toMatchObject({
      state: 'STATE_FAILED',
      errorMsg: 'ERC20: transfer amount exceeds balance',
    });
    expect(h.ctx.clob.balanceOf(wallet)).toBe(balance);
  });

  it('a WALLET batch with a stale nonce: INVALID at once with the reason, and it stays INVALID', async () => {
    const before = await nonce();
    const stale = String(BigInt(before) + 7n);
    const c = venueContracts(h.ctx.config.clobChainId);
    const approve = encodeFunctionData({
      abi: parseAbi(['function approve(address spender, uint256 amount)']),
      functionName: 'approve',
      args: [c.exchangeV2, 1n],
    });
    const sub = await submit(await walletBatch([{ target: c.collateral, value: '0', data: approve }], stale));
    expect(sub).toMatchObject({ state: 'STATE_INVALID', errorMsg: `invalid nonce: expected ${before}` });
    expect(await row(sub.transactionID)).toMatchObject({
      state: 'STATE_INVALID',
      errorMsg: `invalid nonce: expected ${before}`,
      transactionHash: '',
    });
    h.clock.advance(3 * mineMs());
    expect((await row(sub.transactionID)).state).toBe('STATE_INVALID');
    expect(await nonce()).toBe(before);
  });
});
