import { describe, expect, it } from 'vitest';
import type { ProcedureDeps } from './deps';
import { vaultProcedures } from './vault';

const OWNER = { address: '0x00000000000000000000000000000000000000a1', label: 'main', createdAt: 1 };

describe('vault.status', () => {
  it(
    "asks the vault's state and the live grants together " + '(neither read waits for the other) and answers both',
    async () => {
      let grantsAsked!: () => void;
      let stateAsked!: () => void;
      const grantsStarted = new Promise<void>((r) => (grantsAsked = r));
      const stateStarted = new Promise<void>((r) => (stateAsked = r));
      const deps = {
        vault: {
          state: 'unlocked',
          // The state answers only once the grants were asked, and the grants only once the state was: reads one after
          // the other never finish.
          status: async () => {
            stateAsked();
            await grantsStarted;
            return { initialized: true, unlocked: true, state: 'unlocked', retryAfterMs: 0 };
          },
          listOwners: async () => [OWNER],
          listProxies: async () => [],
          hasClobCredentials: async () => false,
          clobSignatureType: async () => undefined,
        },
        db: { get: async () => OWNER.address },
        registry: { size: 0 },
        grants: {
          list: async () => {
            grantsAsked();
            await stateStarted;
            return [{ origin: 'https://app.example', expiresAt: 5 }];
          },
        },
      } as unknown as ProcedureDeps;
      const answer = vaultProcedures(deps)['vault.status']({}, {} as never);
      const timeout = new Promise<never>((_, no) =>
        setTimeout(() => no(new Error('vault.status waited for one read before asking the other')), 2_000),
      );
      await expect(Promise.race([answer, timeout])).resolves.toMatchObject({
        state: 'unlocked',
        accounts: [{ address: OWNER.address, label: 'main', proxies: [], hasClobCredentials: false }],
        activeAccount: OWNER.address,
        pendingApprovals: 0,
        session: [{ origin: 'https://app.example', expiresAt: 5 }],
      });
    },
  );
});
