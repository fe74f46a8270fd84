import { describe, expect, it } from 'vitest';
import { START_HINT_KEY, usableHint, VAULT_EPOCH_KEY } from './start-hint';

const status = (over: Record<string, unknown> = {}) => ({
  initialized: true,
  unlocked: true,
  state: 'unlocked',
  retryAfterMs: 0,
  accounts: [],
  activeAccount: null,
  pendingApprovals: 0,
  session: [],
  venueChosen: true,
  recoverable: false,
  ...over,
});
const stored = (hint: unknown, epoch: unknown) => ({ [START_HINT_KEY]: hint, [VAULT_EPOCH_KEY]: epoch });

describe('usableHint (popup open)', () => {
  it('gives the stored status when it was written in the current epoch and says unlocked', () => {
    expect(usableHint(stored({ epoch: 'epoch-0001', status: status() }, 'epoch-0001'))).toEqual(status());
  });

  it('ignores a hint of an earlier session (the vault was locked or unlocked again since)', () => {
    expect(usableHint(stored({ epoch: 'epoch-0001', status: status() }, 'epoch-0002'))).toBeUndefined();
    expect(usableHint(stored({ epoch: 'epoch-0001', status: status() }, undefined))).toBeUndefined();
  });

  it('never offers a locked or trading-session status, nor a malformed one', () => {
    expect(
      usableHint(stored({ epoch: 'epoch-0001', status: status({ unlocked: false, state: 'locked' }) }, 'epoch-0001')),
    ).toBeUndefined();
    expect(
      usableHint(stored({ epoch: 'epoch-0001', status: status({ unlocked: false, state: 'session' }) }, 'epoch-0001')),
    ).toBeUndefined();
    expect(usableHint(stored({ epoch: 'epoch-0001', status: { unlocked: true } }, 'epoch-0001'))).toBeUndefined();
    expect(usableHint(stored('unlocked', 'epoch-0001'))).toBeUndefined();
  });
});
