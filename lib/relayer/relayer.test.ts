import { describe, expect, it } from 'vitest';
import {
  encodeFunctionData,
  hashTypedData,
  maxUint256,
  parseAbi,
  recoverTypedDataAddress,
  zeroHash,
  type Address,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { walletBatchTypedData, walletCreateRequest, type WalletCall } from './batch';
import { builderSignature } from './builder';
import { venueContracts } from './contracts';
import { describeWalletCalls, ForbiddenSpenderError, UndecodableCallError } from './decode';
import { beaconDepositWallet, uupsDepositWallet } from './wallet';

const owner = privateKeyToAccount('0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80');
const BEACON: Address = '0x1111111111111111111111111111111111111111';
const ABI = parseAbi([
  'function approve(address spender, uint256 amount)',
  'function transfer(address to, uint256 amount)',
  'function setApprovalForAll(address operator, bool approved)',
  'function safeTransferFrom(address from, address to, uint256 id, uint256 amount, bytes data)',
  'function redeemPositions(address collateral, bytes32 parentCollectionId, bytes32 conditionId, uint256[] indexSets)',
  'function mint(address to, uint256 amount)',
]);
const c = venueContracts(80002);
const WALLET = '0x12d77BcbDC3E67F5Da4Dc8e798623482D4a711db';
const call = (target: Address, data: `0x${string}`): WalletCall => ({ target, value: '0', data });
const approve = (spender: Address, amount = maxUint256) =>
  call(c.collateral, encodeFunctionData({ abi: ABI, functionName: 'approve', args: [spender, amount] }));

describe('deposit-wallet address (PROTOCOL.md §4.2)', () => {
  it('reproduces the UUPS and beacon reference addresses', () => {
    expect(uupsDepositWallet(owner.address, 137)).toBe('0xdf8b9E8f9AB23f261F6e1B171B7454ae6E46Ba76');
    expect(uupsDepositWallet(owner.address, 80002)).toBe(WALLET);
    expect(beaconDepositWallet(owner.address, 80002, BEACON)).toBe('0x5819Fc5bD66bF36ef3bB59a9ebFbCF60aecF3F09');
  });

  it('refuses a chain without deposit wallets and a malformed owner', () => {
    expect(() => uupsDepositWallet(owner.address, 1)).toThrow(/chainId/);
    expect(() => uupsDepositWallet('0x1234' as Address, 137)).toThrow(/owner/);
  });
});

describe('deposit-wallet batches (PROTOCOL.md §4.4)', () => {
  const ref: { chainId: number; wallet: Address; nonce: string; deadline: string; calls: [WalletCall] } = {
    chainId: 80002,
    wallet: WALLET,
    nonce: '0',
    deadline: '1767229200',
    calls: [approve(c.exchangeV2)],
  };

  it('reproduces the batch reference digest and signature', async () => {
    expect(ref.calls[0].data).toBe(
      `0x095ea7b3000000000000000000000000e111180000d2663c0091e4f400237545b87b996b${'f'.repeat(64)}`,
    );
    const typed = walletBatchTypedData({ ...ref, calls: [...ref.calls] });
    expect(hashTypedData(typed)).toBe('0x560478bf902d3ac5d77ea46cf981a166d4cf883e443181ce5c1c484c58734502');
    const signature = await owner.signTypedData(typed);
    expect(signature).toBe(
      '0x9a81156231b0e9c715b030773ecd3106a359750724e753c3db054dc0fddb7a0f' +
        '10e43000dfc829dbcd346503fa15196355134bc8eb1408cf37f37af31b453c051b',
    );
    expect(await recoverTypedDataAddress({ ...typed, signature })).toBe(owner.address);
  });

  it('builds the WALLET-CREATE reference body', () => {
    expect(JSON.stringify(walletCreateRequest(owner.address, 137))).toBe(
      '{"type":"WALLET-CREATE","from":"0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266",' +
        '"to":"0x00000000000Fb5C9ADea0298D729A0CB3823Cc07"}',
    );
  });

  it('refuses an empty batch, a bad deadline and malformed call data', () => {
    expect(() => walletBatchTypedData({ ...ref, calls: [] })).toThrow(/batch\.calls/);
    expect(() => walletBatchTypedData({ ...ref, deadline: '-1' })).toThrow(/batch\.deadline/);
    expect(() => walletBatchTypedData({ ...ref, calls: [{ ...ref.calls[0], data: '0x0' }] })).toThrow(
      /batch\.calls\[0\]\.data/,
    );
  });
});

describe('builder headers (PROTOCOL.md §4.4)', () => {
  const creds = { key: 'k', secret: 'BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc=', passphrase: 'p' };
  it('reproduces the two reference signatures', () => {
    const body = JSON.stringify(walletCreateRequest(owner.address, 137));
    expect(
      builderSignature({ secret: creds.secret, timestamp: 1767225600, method: 'POST', path: '/submit', body }),
    ).toBe('32DWRhV7Z2begN2N8OBWtXWezVgPRaryK1nkuZd8zGs=');
    expect(
      builderSignature({ secret: creds.secret, timestamp: 1767225600, method: 'GET', path: '/transactions' }),
    ).toBe('HASg6o94lRw2PkOueHVvyMtWv_GBsYm2PGel-wIHF04=');
  });
});

describe('describeWalletCalls', () => {
  const ctf = (fn: 'setApprovalForAll', op: Address, on = true) =>
    call(c.conditionalTokens, encodeFunctionData({ abi: ABI, functionName: fn, args: [op, on] }));

  it('says a setup batch in plain words: token, spender, amount; no withdrawal', () => {
    const d = describeWalletCalls(80002, WALLET, [
      approve(c.exchangeV2),
      approve(c.negRiskExchangeV2, 5_000_000n),
      ctf('setApprovalForAll', c.exchangeV2),
      ctf('setApprovalForAll', c.negRiskExchangeV2),
    ]);
    expect(d.withdrawal).toBe(false);
    expect(d.calls.map((x) => x.words)).toEqual([
      'Allow the exchange (V2) (0xE111180000d2663C0091e4f400237545B87B996B) ' +
        'to spend an unlimited amount of collateral (USDC) of the deposit wallet',
      'Allow the negative-risk exchange (V2) (0xe2222d279d744050d28e00520010520000310F59) ' +
        'to spend 5 collateral (USDC) of the deposit wallet',
      'Allow the exchange (V2) (0xE111180000d2663C0091e4f400237545B87B996B) ' +
        'to move all outcome tokens of the deposit wallet',
      'Allow the negative-risk exchange (V2) (0xe2222d279d744050d28e00520010520000310F59) ' +
        'to move all outcome tokens of the deposit wallet',
    ]);
    expect(d.calls[1]).toMatchObject({ kind: 'approve', spender: c.negRiskExchangeV2, amount: 5_000_000n });
  });

  it('decodes a redeem into the wallet (not a withdrawal)', () => {
    const cond = `0x${'ab'.repeat(32)}` as const;
    const d = describeWalletCalls(80002, WALLET, [
      call(
        c.conditionalTokens,
        encodeFunctionData({
          abi: ABI,
          functionName: 'redeemPositions',
          args: [c.collateral, zeroHash, cond, [1n, 2n]],
        }),
      ),
    ]);
    expect(d).toMatchObject({ withdrawal: false, calls: [{ kind: 'redeem', conditionId: cond, indexSets: [1n, 2n] }] });
  });

  it('classifies a collateral transfer and an outcome-token transfer out as withdrawals', () => {
    const to: Address = '0x9999999999999999999999999999999999999999';
    const t = describeWalletCalls(80002, WALLET, [
      call(c.collateral, encodeFunctionData({ abi: ABI, functionName: 'transfer', args: [to, 2_500_000n] })),
    ]);
    expect(t.withdrawal).toBe(true);
    expect(t.calls[0]!.words).toBe(`Withdraw 2.5 collateral (USDC) to ${to}`);
    const s = describeWalletCalls(80002, WALLET, [
      call(
        c.conditionalTokens,
        encodeFunctionData({ abi: ABI, functionName: 'safeTransferFrom', args: [WALLET, to, 7n, 1_000_000n, '0x'] }),
      ),
    ]);
    expect(s).toMatchObject({ withdrawal: true, calls: [{ kind: 'transfer', to, ids: [7n], amounts: [1_000_000n] }] });
  });

  it('refuses approvals to any other spender, unknown functions, unknown contracts and native value', () => {
    const attacker: Address = '0x6666666666666666666666666666666666666666';
    expect(() => describeWalletCalls(80002, WALLET, [approve(attacker)])).toThrow(ForbiddenSpenderError);
    expect(() => describeWalletCalls(80002, WALLET, [ctf('setApprovalForAll', attacker)])).toThrow(
      ForbiddenSpenderError,
    );
    expect(() =>
      describeWalletCalls(80002, WALLET, [
        call(c.collateral, encodeFunctionData({ abi: ABI, functionName: 'mint', args: [attacker, 1n] })),
      ]),
    ).toThrow(UndecodableCallError);
    expect(() => describeWalletCalls(80002, WALLET, [{ ...approve(c.exchangeV2), target: attacker }])).toThrow(
      UndecodableCallError,
    );
    expect(() => describeWalletCalls(80002, WALLET, [{ ...approve(c.exchangeV2), value: '1' }])).toThrow(
      UndecodableCallError,
    );
    expect(() => describeWalletCalls(80002, WALLET, [call(c.collateral, '0xdeadbeef')])).toThrow(
      /cannot be shown in plain words/,
    );
    // Revoking is harmless, whoever the operator.
    expect(describeWalletCalls(80002, WALLET, [ctf('setApprovalForAll', attacker, false)]).calls[0]!.kind).toBe(
      'setApprovalForAll',
    );
  });
});
