import { describe, expect, it } from 'vitest';
import { createDepositStore, txProgress, txStateText } from './deposit';
import { fakeCall, FakeFailure } from './testkit';

const ACCOUNT = '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266';
const WALLET = {
  wallet: '0x12d77BcbDC3E67F5Da4Dc8e798623482D4a711db',
  kind: 'uups',
  deployed: true,
  approvals: 'missing',
};
const noSleep = async () => undefined;

describe('createDepositStore', () => {
  it('shows no address until the background derived and checked it', async () => {
    const { call, calls } = fakeCall({
      'clob.depositWallet.status': () => ({ wallet: null, redeemable: [] }),
      'clob.depositWallet.derive': () => WALLET,
    });
    const s = createDepositStore(call, ACCOUNT);
    await s.load();
    expect(s.wallet.value).toBeNull();
    await s.setUp();
    expect(calls.map((c) => c.type)).toEqual([
      'clob.depositWallet.status',
      'clob.depositWallet.derive',
      'clob.depositWallet.status',
    ]);
  });

  it('asks the background to replace existing API credentials only when the person confirmed the switch', async () => {
    const { call, calls } = fakeCall({
      'clob.depositWallet.status': () => ({ wallet: null, redeemable: [] }),
      'clob.depositWallet.derive': () => WALLET,
    });
    const s = createDepositStore(call, ACCOUNT);
    await s.setUp();
    await s.setUp(true);
    expect(calls.filter((c) => c.type === 'clob.depositWallet.derive').map((c) => c.payload)).toEqual([
      { account: ACCOUNT },
      { account: ACCOUNT, replaceCredentials: true },
    ]);
  });

  it('follows the approval batch with progress until mined', async () => {
    const states = ['STATE_NEW', 'STATE_EXECUTED', 'STATE_MINED'];
    const seen: number[] = [];
    const { call } = fakeCall({
      'clob.walletBatch': () => ({ transactionID: 't1', state: 'STATE_NEW' }),
      'clob.depositWallet.status': () => ({
        wallet: WALLET,
        redeemable: [],
        transaction: { transactionID: 't1', state: states.shift() ?? 'STATE_MINED', transactionHash: '' },
      }),
    });
    const s = createDepositStore(call, ACCOUNT, {
      sleep: async () => void seen.push(txProgress(s.tx.value?.state ?? '')),
    });
    await s.approve();
    expect(seen).toEqual([1, 2]);
    expect(s.tx.value).toMatchObject({ label: 'Approving the exchanges', state: 'STATE_MINED' });
    expect(txStateText(s.tx.value!)).toBe('Mined');
  });

  it(
    'a reopened popup follows the transaction the background ' + 'remembers until mined, without sending anything',
    async () => {
      const states = ['STATE_EXECUTED', 'STATE_MINED'];
      const { call, calls } = fakeCall({
        'clob.depositWallet.status': (p: { transactionID?: string }) =>
          p.transactionID === undefined
            ? {
                wallet: WALLET,
                redeemable: [],
                pending: [
                  {
                    label: 'Creating the deposit wallet',
                    transactionID: 't0',
                    state: 'STATE_MINED',
                    transactionHash: '0x01',
                  },
                  { label: 'Approving the exchanges', transactionID: 't9', state: 'STATE_NEW', transactionHash: '' },
                ],
              }
            : {
                wallet: WALLET,
                redeemable: [],
                transaction: {
                  transactionID: p.transactionID,
                  state: states.shift() ?? 'STATE_MINED',
                  transactionHash: '0x02',
                },
              },
      });
      const s = createDepositStore(call, ACCOUNT, { sleep: noSleep });
      await s.resume();
      expect(s.tx.value).toMatchObject({ label: 'Approving the exchanges', transactionID: 't9', state: 'STATE_MINED' });
      expect(
        calls
          .filter((c) => c.type === 'clob.depositWallet.status')
          .map((c) => (c.payload as { transactionID?: string }).transactionID),
      ).toEqual([undefined, 't9', 't9']);
      expect(calls.every((c) => c.type === 'clob.depositWallet.status')).toBe(true);
    },
  );

  it(
    'a reopened popup shows a remembered transaction that ' + 'failed meanwhile, with the reason, and does not poll',
    async () => {
      const { call, calls } = fakeCall({
        'clob.depositWallet.status': () => ({
          wallet: WALLET,
          redeemable: [],
          pending: [
            {
              label: 'Redeeming',
              transactionID: 't4',
              state: 'STATE_FAILED',
              transactionHash: '0x03',
              error: 'result for condition not received yet',
            },
          ],
        }),
      });
      const s = createDepositStore(call, ACCOUNT, { sleep: noSleep });
      await s.resume();
      expect(s.tx.value).toMatchObject({ label: 'Redeeming', state: 'STATE_FAILED' });
      expect(txStateText(s.tx.value!)).toBe(
        'Failed when mined: result for condition not received yet. Nothing was retried.',
      );
      expect(calls).toHaveLength(1);
    },
  );

  it('stops at FAILED with the relayer reason and sends nothing again', async () => {
    const { call, calls } = fakeCall({
      'clob.walletBatch': () => ({ transactionID: 't2', state: 'STATE_NEW' }),
      'clob.depositWallet.status': () => ({
        wallet: WALLET,
        redeemable: [],
        transaction: {
          transactionID: 't2',
          state: 'STATE_FAILED',
          transactionHash: '',
          error: 'result for condition not received yet',
        },
      }),
    });
    const s = createDepositStore(call, ACCOUNT, { sleep: noSleep });
    await s.redeem(`0x${'ab'.repeat(32)}`);
    expect(txProgress('STATE_FAILED')).toBe(0);
    expect(txStateText(s.tx.value!)).toBe(
      'Failed when mined: result for condition not received yet. Nothing was retried.',
    );
    expect(calls.filter((c) => c.type === 'clob.walletBatch')).toHaveLength(1);
  });

  it(
    'withdraws through the bridge: one batch with the typed ' +
      'destination, followed until mined; a bad chain id sends nothing',
    async () => {
      const { call, calls } = fakeCall({
        'clob.walletBatch': () => ({ transactionID: 't3', state: 'STATE_NEW' }),
        'clob.depositWallet.status': () => ({
          wallet: WALLET,
          redeemable: [],
          transaction: { transactionID: 't3', state: 'STATE_MINED', transactionHash: '' },
        }),
      });
      const s = createDepositStore(call, ACCOUNT, { sleep: noSleep });
      const to = { toTokenAddress: WALLET.wallet, recipient: ACCOUNT };
      await s.withdraw({ amount: '2.5', toChainId: 'one', ...to });
      expect(s.error.value).toMatch(/chain id/);
      expect(calls.filter((c) => c.type === 'clob.walletBatch')).toHaveLength(0);
      await s.withdraw({ amount: '2.5', toChainId: '1', ...to });
      expect(calls.find((c) => c.type === 'clob.walletBatch')?.payload).toEqual({
        account: ACCOUNT,
        batch: { kind: 'withdraw', amount: '2.5', toChainId: 1, ...to },
      });
      expect(s.tx.value).toMatchObject({ label: 'Withdrawing 2.5 USDC', state: 'STATE_MINED' });
    },
  );

  it('shows a refusal from the background in words', async () => {
    const { call } = fakeCall({
      'clob.depositWallet.derive': () => {
        throw new FakeFailure({
          name: 'Relayer.ChainRpcUnavailableError',
          shortMessage: 'The chain RPC could not tell the deposit wallet.',
        });
      },
    });
    const s = createDepositStore(call, ACCOUNT);
    await s.setUp();
    expect(s.error.value).toBe('The chain RPC could not tell the deposit wallet.');
    expect(s.wallet.value).toBeNull();
  });
});
