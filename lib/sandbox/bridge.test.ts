/**
 * The sandbox bridge's deposit-address withdraw (the deposit wallet as the source): the route
 * answers one deposit address per destination, only for a deployed deposit wallet, refuses malformed
 * fields, and records nothing until collateral reaches the address in a mined relayer batch.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from '../../test/kits/sandbox';
import { uupsDepositWallet } from '../relayer/wallet';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

const post = async (body: unknown) => {
  const r = await fetch(`${h.url}/bridge/withdraw`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: r.status, body: (await r.json()) as { address?: { evm: string }; error?: string } };
};

describe('sandbox bridge: POST /withdraw without amount (the deposit-address form)', () => {
  const recipient = '0x6666666666666666666666666666666666666666';
  const token = '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48';

  it('answers a stable deposit address for a deployed deposit wallet and refuses anything else', async () => {
    const wallet = uupsDepositWallet(h.owner.address, h.ctx.config.clobChainId);
    const route = { address: wallet, toChainId: 1, toTokenAddress: token, recipientAddr: recipient };
    expect(await post(route)).toEqual({ status: 400, body: { error: 'address is not a deployed wallet' } });
    h.ctx.relayerChain.wallets.set(wallet.toLowerCase(), {
      address: wallet.toLowerCase(),
      owner: h.owner.address.toLowerCase(),
      deployed: true,
    });
    const first = await post(route);
    expect(first.status).toBe(200);
    expect(first.body.address?.evm).toMatch(/^0x[0-9a-fA-F]{40}$/);
    expect((await post(route)).body.address?.evm).toBe(first.body.address?.evm);
    expect((await post({ ...route, recipientAddr: token })).body.address?.evm).not.toBe(first.body.address?.evm);
    expect((await post({ ...route, recipientAddr: 'nope' })).status).toBe(400);
    expect((await post({ ...route, toChainId: '1' })).status).toBe(400);
    expect((await post({ ...route, toTokenAddress: 7 })).status).toBe(400);
    expect(h.ctx.bridgeWithdrawals).toHaveLength(0);
  });
});
