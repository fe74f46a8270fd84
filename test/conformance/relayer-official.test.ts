/**
 * The official relayer client (`@polymarket/builder-relayer-client` 0.0.10) against the sandbox, as a new
 * API user runs it: builder key, derive the deposit wallet (through the `/rpc` stand-in),
 * deployed?, deploy and poll, nonce, an approval batch, transactions; refused batches end INVALID with a
 * reason; a revoked builder key is refused. Every step must pass.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeFunctionData, parseAbi } from 'viem';
import * as relayerBindings from '@polymarket/bindings/relayer';
import { startHarness, type Harness } from '../kits/sandbox';
import { uupsDepositWallet } from '../../lib/relayer/wallet';
import { venueContracts } from '../../lib/relayer/contracts';
import { CHAIN, deadline, newDepositUser, setupCalls, type DepositUser } from './deposit-kit';

let h: Harness;
let u: DepositUser;
let wallet: string;

beforeAll(async () => {
  h = await startHarness();
  u = await newDepositUser(h);
});
afterAll(async () => {
  await h?.close();
});

/** Lets the sandbox mine what was submitted, then waits as the official client does. */
async function mined(resp: { wait: () => Promise<unknown> }) {
  h.clock.advance(2 * h.ctx.config.relayerMineMs);
  return resp.wait();
}

describe('official relayer client against the sandbox', () => {
  it('lists the builder key it created', async () => {
    const keys = (await u.l2.getBuilderApiKeys()) as { key: string }[];
    expect(keys.map((k) => k.key)).toContain(u.builder.key);
  });

  it('derives the deposit wallet through the RPC stand-in (PROTOCOL.md §4.2)', async () => {
    wallet = await u.relay.deriveDepositWalletAddress();
    expect(wallet).toBe(uupsDepositWallet(u.eoa, CHAIN));
    expect(await u.relay.getDeployed(wallet)).toBe(false);
  });

  it('deploys the wallet: NEW at once, then mined; deployed afterwards', async () => {
    const resp = await u.relay.deployDepositWallet();
    expect(resp.state).toBe('STATE_NEW');
    expect(
      relayerBindings.RelayerExecuteResponseSchema.safeParse({ transactionID: resp.transactionID, state: resp.state })
        .success,
    ).toBe(true);
    const row = (await mined(resp)) as Record<string, unknown>;
    expect(row).toMatchObject({
      type: 'WALLET-CREATE',
      from: u.eoa,
      proxyAddress: wallet,
      state: expect.stringMatching(/STATE_MINED|STATE_CONFIRMED/),
      transactionHash: expect.stringMatching(/^0x[0-9a-f]{64}$/),
    });
    for (const k of [
      'transactionID',
      'transactionHash',
      'from',
      'to',
      'proxyAddress',
      'data',
      'nonce',
      'value',
      'state',
      'type',
      'metadata',
      'createdAt',
      'updatedAt',
    ])
      expect(row).toHaveProperty(k);
    expect(await u.relay.getDeployed(wallet)).toBe(true);
    expect(await u.relay.deriveDepositWalletAddress()).toBe(wallet);
  });

  it('runs a signed approval batch: nonce 0 then 1, approvals set', async () => {
    expect(await u.relay.getNonce(u.eoa, 'WALLET')).toEqual({ nonce: '0' });
    const resp = await u.relay.executeDepositWalletBatch(setupCalls(), wallet, deadline(h));
    const row = (await mined(resp)) as Record<string, unknown>;
    expect(row).toMatchObject({ type: 'WALLET', state: expect.stringMatching(/STATE_MINED|STATE_CONFIRMED/) });
    expect(await u.relay.getNonce(u.eoa, 'WALLET')).toEqual({ nonce: '1' });
    expect(h.ctx.relayerChain.isOperator(wallet, 'negRiskExchangeV2')).toBe(true);
  });

  it('refuses a batch that approves a stranger (INVALID with the reason; nonce unchanged)', async () => {
    const abi = parseAbi(['function approve(address spender, uint256 amount)']);
    const data = encodeFunctionData({
      abi,
      functionName: 'approve',
      args: ['0x6666666666666666666666666666666666666666', 1n],
    });
    const resp = await u.relay.executeDepositWalletBatch(
      [{ target: venueContracts(CHAIN).collateral, value: '0', data }],
      wallet,
      deadline(h),
    );
    const [row] = await resp.getTransaction();
    expect(row).toMatchObject({
      state: 'STATE_INVALID',
      errorMsg: expect.stringMatching(/not one of the venue's exchanges/),
    });
    expect(await u.relay.getNonce(u.eoa, 'WALLET')).toEqual({ nonce: '1' });
  });

  it('refuses an expired deadline', async () => {
    const resp = await u.relay.executeDepositWalletBatch(
      setupCalls(),
      wallet,
      String(Math.floor(h.clock.now / 1000) - 1),
    );
    expect((await resp.getTransaction())[0]).toMatchObject({ state: 'STATE_INVALID', errorMsg: 'deadline expired' });
  });

  it('lists its transactions newest first', async () => {
    const rows = (await u.relay.getTransactions()) as { type: string; state: string }[];
    expect(rows.map((r) => r.type)).toEqual(['WALLET', 'WALLET', 'WALLET', 'WALLET-CREATE']);
  });

  it('is refused after the builder key is revoked', async () => {
    await u.l2.revokeBuilderApiKey();
    await expect(u.relay.getTransactions()).rejects.toThrow(/401/);
  });
});
