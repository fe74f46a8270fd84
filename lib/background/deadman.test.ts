import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { BaseError } from '../errors/base';
import type { PerpsCommand } from '../perps/commands';
import { DeadMan, targetsOf, type DeadManDeps, type DeadManTarget } from './deadman';
import type { DeadManAuditEntry } from './deadman-audit';
import { HEARTBEAT_MS, PERPS_LEAD_MS, PERPS_RENEW_MS } from './deadman-switches';

const ACCOUNT = '0x00000000000000000000000000000000000000A1';

/** A fake venue pair: records every auto-cancel time and heartbeat; `down` makes both fail. */
function venues() {
  const v = {
    autoCancels: [] as number[],
    heartbeats: 0,
    down: false,
    hang: false,
    perpsSend: vi.fn(async (_account: string, command: PerpsCommand) => {
      if (v.hang) await new Promise(() => undefined);
      if (v.down) throw new BaseError('The gateway did not answer.');
      v.autoCancels.push((command.body.args as { time: number }).time);
      return { status: 'ok' };
    }),
    clobHeartbeat: vi.fn(async (_account: string, id: string) => {
      if (v.down) throw new BaseError('The exchange did not answer.');
      v.heartbeats++;
      return id || 'session-1';
    }),
  };
  return v;
}

function deadman(o: { targets?: DeadManTarget[]; unlocked?: boolean; proxy?: boolean; clob?: boolean } = {}) {
  const v = venues();
  const state = { targets: o.targets ?? [{ venue: 'perps' as const, account: ACCOUNT }], unlocked: o.unlocked ?? true };
  const audit: DeadManAuditEntry[] = [];
  const holds: string[] = [];
  const deps: DeadManDeps = {
    service: v as unknown as DeadManDeps['service'],
    vault: {
      get unlocked() {
        return state.unlocked;
      },
      listProxies: async () =>
        o.proxy === false
          ? []
          : [{ id: 'p', account: ACCOUNT, proxy: ACCOUNT, expiry: Date.now() + 86_400_000, label: '' }],
      hasClobCredentials: async () => o.clob ?? true,
    } as unknown as DeadManDeps['vault'],
    targets: async () => state.targets,
    ticket: () => ({ seen: {} }),
    lifetime: { hold: (r) => void holds.push(`hold:${r}`), release: (r) => void holds.push(`release:${r}`) },
    audit: async (e) => void audit.push(e),
  };
  return { dm: new DeadMan(deps), v, state, audit, holds };
}

beforeEach(() => {
  vi.useFakeTimers({ now: 1_800_000_000_000 });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('targetsOf', () => {
  it('a grant that names its venue arms only that venue; one that names none arms both', () => {
    expect(targetsOf([{ account: ACCOUNT, venue: 'perps' }])).toEqual([{ venue: 'perps', account: ACCOUNT }]);
    expect(targetsOf([{ account: ACCOUNT }, { account: ACCOUNT.toLowerCase(), venue: 'clob' }])).toEqual([
      { venue: 'perps', account: ACCOUNT },
      { venue: 'clob', account: ACCOUNT.toLowerCase() },
    ]);
  });
});

describe('DeadMan.start', () => {
  it(
    'arms on start when a grant is live, before any request: the ' +
      'auto-cancel is set a lead ahead and the background is held',
    async () => {
      const { dm, v, holds } = deadman();
      await dm.start();
      await vi.advanceTimersByTimeAsync(0);
      expect(v.autoCancels).toEqual([Date.now() + PERPS_LEAD_MS]);
      expect(dm.state).toMatchObject({ armed: true, venues: [{ venue: 'perps', armed: true, renewals: 1 }] });
      expect(holds).toEqual(['hold:dead-man']);
    },
  );

  it('arms nothing and holds nothing when no grant is live', async () => {
    const { dm, v, holds } = deadman({ targets: [] });
    await dm.start();
    await vi.advanceTimersByTimeAsync(PERPS_RENEW_MS * 3);
    expect(v.perpsSend).not.toHaveBeenCalled();
    expect(v.clobHeartbeat).not.toHaveBeenCalled();
    expect(dm.state).toEqual({ armed: false, venues: [] });
    expect(holds).not.toContain('hold:dead-man');
  });

  it('a perps-only target never starts order-book heartbeats', async () => {
    const { dm, v } = deadman({ targets: [{ venue: 'perps', account: ACCOUNT }] });
    await dm.start();
    await vi.advanceTimersByTimeAsync(HEARTBEAT_MS * 5);
    expect(v.clobHeartbeat).not.toHaveBeenCalled();
    expect(v.autoCancels.length).toBeGreaterThan(1);
  });
});

describe('DeadMan.killSwitchArmed', () => {
  it(
    'is false before the first successful renewal, true ' + 'after it, and false again once renewals stop succeeding',
    async () => {
      const { dm, v } = deadman();
      v.down = true;
      await dm.start();
      expect(await dm.killSwitchArmed('perps', ACCOUNT)).toBe(false);
      expect(dm.state.venues[0]!.error).toBe('The gateway did not answer.');
      v.down = false;
      await vi.advanceTimersByTimeAsync(PERPS_RENEW_MS);
      expect(await dm.killSwitchArmed('perps', ACCOUNT)).toBe(true);
      expect(await dm.killSwitchArmed('perps', ACCOUNT.toLowerCase())).toBe(true);
      expect(await dm.killSwitchArmed('clob', ACCOUNT)).toBe(false); // not a target
      v.down = true;
      await vi.advanceTimersByTimeAsync(PERPS_RENEW_MS * 2);
      expect(await dm.killSwitchArmed('perps', ACCOUNT)).toBe(true); // the switch set 20 s ago still has 40 s to run
      await vi.advanceTimersByTimeAsync(15_000);
      expect(await dm.killSwitchArmed('perps', ACCOUNT)).toBe(false); // 25 s left, under 30 s: granted requests ask
      expect(dm.state).toMatchObject({
        armed: false,
        venues: [{ venue: 'perps', armed: false, error: 'The gateway did not answer.' }],
      });
    },
  );

  it('a request that woke the background waits for the first renewal in flight, then answers', async () => {
    const { dm, v } = deadman();
    const armed = dm.killSwitchArmed('perps', ACCOUNT); // nothing started yet: it arms the live grants itself
    await vi.advanceTimersByTimeAsync(0);
    expect(await armed).toBe(true);
    expect(v.autoCancels).toHaveLength(1);
  });

  it('a venue that does not answer makes the request ask after a bounded wait', async () => {
    const { dm, v } = deadman();
    v.hang = true;
    const armed = dm.killSwitchArmed('perps', ACCOUNT);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(await armed).toBe(false);
  });

  it('is false without a live proxy key or API credentials, and says why', async () => {
    const { dm } = deadman({
      targets: [
        { venue: 'perps', account: ACCOUNT },
        { venue: 'clob', account: ACCOUNT },
      ],
      proxy: false,
      clob: false,
    });
    await dm.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(await dm.killSwitchArmed('perps', ACCOUNT)).toBe(false);
    expect(await dm.killSwitchArmed('clob', ACCOUNT)).toBe(false);
    expect(dm.state.venues.map((x) => x.error)).toEqual([
      'The kill switch cannot be armed: no live proxy key for this account.',
      'The kill switch cannot be armed: no order-book API credentials for this account.',
    ]);
  });

  it('order book: true while the last heartbeat is fresh, false once heartbeats stop succeeding', async () => {
    const { dm, v } = deadman({ targets: [{ venue: 'clob', account: ACCOUNT }] });
    await dm.start();
    await vi.advanceTimersByTimeAsync(HEARTBEAT_MS * 3);
    expect(v.heartbeats).toBe(4);
    expect(await dm.killSwitchArmed('clob', ACCOUNT)).toBe(true);
    v.down = true;
    await vi.advanceTimersByTimeAsync(HEARTBEAT_MS * 2);
    expect(await dm.killSwitchArmed('clob', ACCOUNT)).toBe(false);
  });

  it('does not renew while the keys are not usable (the vault is locked)', async () => {
    const { dm, v, state } = deadman();
    state.unlocked = false;
    await dm.start();
    await vi.advanceTimersByTimeAsync(PERPS_RENEW_MS * 2);
    expect(v.perpsSend).not.toHaveBeenCalled();
    expect(await dm.killSwitchArmed('perps', ACCOUNT)).toBe(false);
  });
});

describe('DeadMan.halt and DeadMan.disarm', () => {
  it(
    'halt (lock, panic) stops renewing and never sends ' + 'autoCancel {time: 0}, even when the grants then go away',
    async () => {
      const { dm, v, state, holds } = deadman({
        targets: [
          { venue: 'perps', account: ACCOUNT },
          { venue: 'clob', account: ACCOUNT },
        ],
      });
      await dm.start();
      await vi.advanceTimersByTimeAsync(PERPS_RENEW_MS);
      const renewals = v.autoCancels.length;
      const beats = v.heartbeats;
      await dm.halt();
      state.targets = []; // the grants are revoked after the halt (lock, panic)
      await dm.sync();
      await dm.disarm();
      await vi.advanceTimersByTimeAsync(PERPS_RENEW_MS * 3);
      expect(v.autoCancels).toHaveLength(renewals);
      expect(v.autoCancels).not.toContain(0);
      expect(v.heartbeats).toBe(beats);
      expect(await dm.killSwitchArmed('perps', ACCOUNT)).toBe(false);
      expect(holds.at(-1)).toBe('release:dead-man');
    },
  );

  it('after a halt nothing re-arms while the old grants are still listed, but a later grant arms again', async () => {
    const { dm, v, state } = deadman();
    await dm.start();
    await dm.halt();
    await dm.sync(); // the grants are not revoked yet
    await vi.advanceTimersByTimeAsync(PERPS_RENEW_MS);
    expect(v.autoCancels).toHaveLength(1);
    state.targets = [];
    await dm.sync();
    state.targets = [{ venue: 'perps', account: ACCOUNT }];
    await dm.sync();
    await vi.advanceTimersByTimeAsync(0);
    expect(v.autoCancels).toHaveLength(2);
    expect(await dm.killSwitchArmed('perps', ACCOUNT)).toBe(true);
  });

  it(
    'disarm (the last grant ended normally) unsets the ' + 'perps auto-cancel with time 0 and stops the heartbeats',
    async () => {
      const { dm, v, state, holds } = deadman({
        targets: [
          { venue: 'perps', account: ACCOUNT },
          { venue: 'clob', account: ACCOUNT },
        ],
      });
      await dm.start();
      await vi.advanceTimersByTimeAsync(PERPS_RENEW_MS);
      state.targets = [];
      await dm.sync();
      expect(v.autoCancels.at(-1)).toBe(0);
      const beats = v.heartbeats;
      await vi.advanceTimersByTimeAsync(PERPS_RENEW_MS * 3);
      expect(v.heartbeats).toBe(beats);
      expect(v.autoCancels.at(-1)).toBe(0);
      expect(holds.at(-1)).toBe('release:dead-man');
    },
  );
});

describe('DeadMan audit', () => {
  it(
    'writes one entry when a period arms and one when it ends, ' +
      'with the renewal count and last renewal — not one per renewal',
    async () => {
      const { dm, v, state, audit } = deadman({
        targets: [
          { venue: 'perps', account: ACCOUNT },
          { venue: 'clob', account: ACCOUNT },
        ],
      });
      await dm.start();
      await vi.advanceTimersByTimeAsync(60_000);
      expect(v.autoCancels.length).toBe(7);
      expect(v.heartbeats).toBe(16);
      expect(audit.map((e) => e.kind)).toEqual(['deadman.arm', 'deadman.arm']);
      expect(audit[0]!.summary).toMatch(/^Dead-man armed for perps/);
      const last = new Date(Date.now()).toISOString();
      state.targets = [];
      await dm.sync();
      expect(audit.map((e) => e.kind)).toEqual(['deadman.arm', 'deadman.arm', 'deadman.end', 'deadman.end']);
      expect(audit[2]!.summary).toContain(`7 renewal(s)`);
      expect(audit[2]!.summary).toContain(`the last at ${last}`);
      expect(audit[2]!.summary).toContain('auto-cancel unset');
      expect(audit[3]!.summary).toContain('16 renewal(s)');
      for (const [, , opts] of v.perpsSend.mock.calls as unknown as [string, PerpsCommand, { audit?: boolean }][])
        expect(opts.audit).toBe(false);
    },
  );

  it('a period that could not arm says why once, however many renewals fail', async () => {
    const { dm, v, audit } = deadman();
    v.down = true;
    await dm.start();
    await vi.advanceTimersByTimeAsync(PERPS_RENEW_MS * 5);
    expect(audit).toEqual([
      expect.objectContaining({ kind: 'deadman.arm', result: 'error', detail: 'The gateway did not answer.' }),
    ]);
  });
});
