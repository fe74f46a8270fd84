import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeFunctionData, maxUint256, pad, parseAbi, zeroHash, type Address } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { startHarness, type Harness } from '../../test/kits/sandbox';
import { createOrDeriveApiKey, clobL2Request } from '../clob/client';
import { signWalletBatch, walletCreateRequest, type WalletCall } from './batch';
import type { BuilderCredentials } from './builder';
import { readDepositWallet } from './chain';
import { relayerClient } from './client';
import { venueContracts } from './contracts';
import { beaconDepositWallet, uupsDepositWallet } from './wallet';

const CHAIN = 80002;
const c = venueContracts(CHAIN);
const ABI = parseAbi([
  'function approve(address spender, uint256 amount)',
  'function setApprovalForAll(address operator, bool approved)',
  'function redeemPositions(address collateral, bytes32 parentCollectionId, bytes32 conditionId, uint256[] indexSets)',
]);
const call = (target: Address, data: `0x${string}`): WalletCall => ({ target, value: '0', data });
const approve = (spender: Address) =>
  call(c.collateral, encodeFunctionData({ abi: ABI, functionName: 'approve', args: [spender, maxUint256] }));

let h: Harness;
let relayer: ReturnType<typeof relayerClient>;
const owner = privateKeyToAccount(generatePrivateKey());
let creds: BuilderCredentials;
/** The poller's sleep: lets the sandbox clock run instead of waiting. */
const sleep = async (ms: number) => h.clock.advance(ms);
const deadline = () => String(Math.floor(h.clock.now / 1000) + 3600);

beforeAll(async () => {
  h = await startHarness();
  relayer = relayerClient(`${h.url}/relayer/`, fetch, () => h.clock.now);
  const { credentials } = await createOrDeriveApiKey(h.clobUrl, owner, {
    chainId: CHAIN,
    timestamp: Math.floor(h.clock.now / 1000),
    nonce: 0,
  });
  const answer = await clobL2Request(h.clobUrl, {
    address: owner.address,
    credentials,
    method: 'POST',
    requestPath: '/auth/builder-api-key',
    timestamp: Math.floor(h.clock.now / 1000),
  });
  creds = {
    key: String(Object(answer).key),
    secret: String(Object(answer).secret),
    passphrase: String(Object(answer).passphrase),
  };
});
afterAll(async () => {
  await h?.close();
});

describe('readDepositWallet (PROTOCOL.md §4.2, §4.3)', () => {
  it('derives the UUPS wallet through the sandbox RPC stand-in', async () => {
    expect(await readDepositWallet(`${h.url}/rpc`, owner.address, CHAIN)).toEqual({
      address: uupsDepositWallet(owner.address, CHAIN),
      kind: 'uups',
      beacon: '0x0000000000000000000000000000000000000000',
    });
  });

  it('refuses an unreachable RPC, another chain and an error answer: no address', async () => {
    await expect(readDepositWallet('http://127.0.0.1:9/rpc', owner.address, CHAIN)).rejects.toMatchObject({
      name: 'Relayer.ChainRpcUnavailableError',
    });
    await expect(readDepositWallet(`${h.url}/rpc`, owner.address, 137)).rejects.toThrow(/is not chain 137/);
    const failing: typeof fetch = async (_u, init) => {
      const body = JSON.parse(String(init?.body));
      if (body.method === 'eth_chainId') return Response.json({ jsonrpc: '2.0', id: body.id, result: '0x13882' });
      return Response.json({ jsonrpc: '2.0', id: body.id, error: { code: -32000, message: 'header not found' } });
    };
    await expect(readDepositWallet('http://rpc.test', owner.address, CHAIN, failing)).rejects.toThrow(
      /factory read with an error/,
    );
  });

  it(
    'chooses as RelayClient does when the factory names a ' + 'beacon: beacon wallet without UUPS code, UUPS with it',
    async () => {
      const beacon: Address = '0x1111111111111111111111111111111111111111';
      const chainWith =
        (code: string): typeof fetch =>
        async (_u, init) => {
          const body = JSON.parse(String(init?.body));
          const result = { eth_chainId: '0x13882', eth_call: pad(beacon), eth_getCode: code }[String(body.method)];
          return Response.json({ jsonrpc: '2.0', id: body.id, result });
        };
      expect(await readDepositWallet('http://rpc.test', owner.address, CHAIN, chainWith('0x'))).toMatchObject({
        kind: 'beacon',
        address: beaconDepositWallet(owner.address, CHAIN, beacon),
      });
      expect(await readDepositWallet('http://rpc.test', owner.address, CHAIN, chainWith('0x6001'))).toMatchObject({
        kind: 'uups',
        address: uupsDepositWallet(owner.address, CHAIN),
      });
    },
  );
});

describe('relayerClient against the sandbox relayer (PROTOCOL.md §4.4)', () => {
  const wallet = () => uupsDepositWallet(owner.address, CHAIN);

  it('creates the wallet: NEW at once, mined after polling, then deployed', async () => {
    expect(await relayer.deployed(wallet())).toBe(false);
    const sub = await relayer.submit(walletCreateRequest(owner.address, CHAIN), creds);
    expect(sub.state).toBe('STATE_NEW');
    const seen: string[] = [];
    const row = await relayer.waitMined(sub.transactionID, { sleep, pollMs: 500, onRow: (r) => seen.push(r.state) });
    expect(row).toMatchObject({ type: 'WALLET-CREATE', proxyAddress: wallet(), state: 'STATE_MINED' });
    expect(seen[0]).toBe('STATE_NEW');
    expect(await relayer.deployed(wallet())).toBe(true);
  });

  it('runs a signed approval batch and moves the owner nonce', async () => {
    expect(await relayer.nonce(owner.address)).toBe('0');
    const req = await signWalletBatch(owner, {
      chainId: CHAIN,
      wallet: wallet(),
      nonce: '0',
      deadline: deadline(),
      calls: [approve(c.exchangeV2)],
    });
    const sub = await relayer.submit(req, creds);
    await relayer.waitMined(sub.transactionID, { sleep });
    expect(await relayer.nonce(owner.address)).toBe('1');
    expect(h.ctx.relayerChain.allowance(wallet(), 'exchangeV2')).toBe(maxUint256);
  });

  it('surfaces INVALID with the relayer reason and submits nothing again', async () => {
    const before = h.ctx.relayerChain.txs.length;
    const req = await signWalletBatch(owner, {
      chainId: CHAIN,
      wallet: wallet(),
      nonce: '1',
      deadline: deadline(),
      calls: [approve('0x6666666666666666666666666666666666666666')],
    });
    const err = await relayer.submit(req, creds).catch((e: unknown) => e);
    expect(err).toMatchObject({
      name: 'Relayer.TransactionFailedError',
      state: 'STATE_INVALID',
      reason: expect.stringMatching(/not one of the venue's exchanges/),
    });
    expect(h.ctx.relayerChain.txs.length).toBe(before + 1);
  });

  it('surfaces FAILED (a redeem before the market resolves) with its reason after polling', async () => {
    const cond = h.ctx.clob.markets[0]?.conditionId ?? zeroHash;
    const redeem = call(
      c.conditionalTokens,
      encodeFunctionData({ abi: ABI, functionName: 'redeemPositions', args: [c.collateral, zeroHash, cond, [1n, 2n]] }),
    );
    const req = await signWalletBatch(owner, {
      chainId: CHAIN,
      wallet: wallet(),
      nonce: await relayer.nonce(owner.address),
      deadline: deadline(),
      calls: [redeem],
    });
    const sub = await relayer.submit(req, creds);
    const before = h.ctx.relayerChain.txs.length;
    await expect(relayer.waitMined(sub.transactionID, { sleep })).rejects.toMatchObject({
      state: 'STATE_FAILED',
      reason: expect.stringMatching(/.+/),
    });
    expect(h.ctx.relayerChain.txs.length).toBe(before);
  });

  it("lists the builder key's transactions; a wrong secret is refused with the status", async () => {
    expect((await relayer.transactions(creds)).map((r) => r.type).at(-1)).toBe('WALLET-CREATE');
    const wrong = { ...creds, secret: 'BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc=' };
    await expect(relayer.transactions(wrong)).rejects.toMatchObject({
      status: 401,
      shortMessage: expect.stringMatching(/invalid builder credentials/),
    });
    await expect(relayer.submit(walletCreateRequest(owner.address, CHAIN), wrong)).rejects.toMatchObject({
      name: 'Relayer.RequestError',
      status: 401,
    });
  });

  it('refuses a malformed answer', async () => {
    const odd = relayerClient('http://relayer.test', async () => Response.json({ deployed: 'yes' }));
    await expect(odd.deployed(wallet())).rejects.toMatchObject({ name: 'Relayer.MalformedAnswerError' });
  });
});
