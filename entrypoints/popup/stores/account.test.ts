import { describe, expect, it } from 'vitest';
import { cleanQuery, createAccountStore, moveProblem, reviewMove } from './account';
import { fakeCall, FakeFailure } from './testkit';

const ACCOUNT = {
  address: '0x00000000000000000000000000000000000000a1',
  label: '',
  proxies: [{ proxy: '0x00000000000000000000000000000000000000b2', expiry: Date.now() + 60_000, label: 'vault' }],
  hasClobCredentials: false,
};
const DEST = '0x00000000000000000000000000000000000000c3';

describe('reviewMove', () => {
  it('shows a withdrawal in base units (6 decimals)', () => {
    expect(reviewMove(ACCOUNT.address, { kind: 'withdraw', to: ` ${DEST} `, amount: '12.5', label: '' }).base).toBe(
      '12500000',
    );
  });
  it('refuses a zero amount or more than 6 decimals, naming the field', () => {
    for (const amount of ['0', '0.000', '1.1234567', '-1', '']) {
      let problem = '';
      try {
        reviewMove(ACCOUNT.address, { kind: 'withdraw', to: DEST, amount, label: '' });
      } catch (e) {
        problem = moveProblem(e);
      }
      expect(problem).toBe('amount: must be a positive amount with at most 6 decimals');
    }
  });
  it('names the destination as the form does', () => {
    let problem = '';
    try {
      reviewMove(ACCOUNT.address, { kind: 'transfer', to: 'not an address', amount: '1', label: '' });
    } catch (e) {
      problem = moveProblem(e);
    }
    expect(problem).toMatch(/^Destination: /);
  });
});

describe('cleanQuery', () => {
  it('drops empty filters', () =>
    expect(cleanQuery({ status: '', direction: undefined, instrument_id: 0 })).toEqual({ instrument_id: 0 }));
});

describe('createAccountStore', () => {
  it('reads deposits with the status filter and the proxy headers, and keeps the error of a failed read', async () => {
    let fail = false;
    const { call, calls } = fakeCall({
      'perps.read': () => {
        if (fail) throw new FakeFailure({ name: 'GatewayError', shortMessage: 'The perps gateway did not answer.' });
        return {
          data: [
            {
              hash: '0x1',
              amount: '1000000',
              confirmations: 3,
              required_confirmations: 12,
              status: 'pending',
              created_timestamp: 1,
            },
          ],
          more: false,
        };
      },
    });
    const s = createAccountStore(ACCOUNT, call);
    await s.deposits.load('pending');
    expect(calls[0]?.payload).toEqual({ account: ACCOUNT.address, name: 'deposits', query: { status: 'pending' } });
    await s.deposits.load('');
    expect(calls[1]?.payload).toEqual({ account: ACCOUNT.address, name: 'deposits' });
    expect(s.deposits.data.value?.data).toHaveLength(1);
    fail = true;
    await s.deposits.load('');
    expect(s.deposits.error.value).toBe('The perps gateway did not answer.');
  });

  it("falls back to the vault's proxy keys when the venue's list cannot be read", async () => {
    const { call } = fakeCall({
      'perps.read': () => {
        throw new FakeFailure({ name: 'GatewayError', shortMessage: 'down' });
      },
    });
    const s = createAccountStore(ACCOUNT, call);
    s.keys.value = [];
    await s.loadKeys();
    expect(s.keys.value).toEqual(ACCOUNT.proxies);
  });

  it('deletes a key, then re-reads the status; a refusal shows the error and clears busy', async () => {
    let refused = false;
    const { call, calls } = fakeCall({
      'proxy.delete': () => {
        if (refused) throw new FakeFailure({ name: 'GatewayError', shortMessage: 'Unknown proxy.' });
        return null;
      },
    });
    const s = createAccountStore(ACCOUNT, call);
    let changed = 0;
    await s.deleteKey(ACCOUNT.proxies[0]!.proxy, async () => {
      changed++;
    });
    expect(calls[0]?.payload).toEqual({ account: ACCOUNT.address, proxy: ACCOUNT.proxies[0]!.proxy });
    expect(changed).toBe(1);
    refused = true;
    await s.deleteKey(ACCOUNT.proxies[0]!.proxy, async () => {
      changed++;
    });
    expect(changed).toBe(1);
    expect(s.keysError.value).toBe('Unknown proxy.');
    expect(s.keysBusy.value).toBe(false);
  });

  it('reviews a withdrawal, then confirms it: the venue id is shown and the review is gone', async () => {
    const { call, calls } = fakeCall({ 'perps.send': () => ({ withdraw_id: 7 }) });
    const s = createAccountStore(ACCOUNT, call);
    s.reviewFunds({ kind: 'withdraw', to: DEST, amount: '1.5', label: '' });
    expect(s.move.pending.value?.base).toBe('1500000');
    expect(calls).toHaveLength(0);
    expect(await s.confirmFunds()).toBe(true);
    expect(calls[0]?.type).toBe('perps.send');
    expect(s.move.done.value).toBe('Withdrawal #7 accepted');
    expect(s.move.pending.value).toBeUndefined();
  });

  it('shows a refused amount without building anything to sign', () => {
    const s = createAccountStore(ACCOUNT, fakeCall({}).call);
    s.reviewFunds({ kind: 'transfer', to: DEST, amount: '0', label: '' });
    expect(s.move.pending.value).toBeUndefined();
    expect(s.move.error.value).toBe('amount: must be a positive amount with at most 6 decimals');
  });
});
