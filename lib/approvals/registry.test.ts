import { describe, expect, it } from 'vitest';
import { ApprovalChangedError, ApprovalRegistry, MAX_PENDING_TOTAL } from './registry';
import { disconnected } from '../errors/rpc';

function registry() {
  const clock = { now: 1_000_000 };
  const timers: { fn: () => void; at: number }[] = [];
  const r = new ApprovalRegistry({
    now: () => clock.now,
    setTimer: (fn, ms) => {
      const t = { fn, at: clock.now + ms };
      timers.push(t);
      return t;
    },
    clearTimer: (t) => {
      const i = timers.indexOf(t as (typeof timers)[number]);
      if (i >= 0) timers.splice(i, 1);
    },
  });
  const advance = (ms: number) => {
    clock.now += ms;
    for (const t of [...timers])
      if (t.at <= clock.now) {
        timers.splice(timers.indexOf(t), 1);
        t.fn();
      }
  };
  return { r, advance };
}
const view = (origin = 'https://a.example') => ({
  origin,
  kind: 'perps' as const,
  title: 't',
  lines: [],
  flags: [],
  signer: 'proxy key' as const,
  account: null,
  digest: `0x${'1'.repeat(64)}` as const,
});

describe('ApprovalRegistry', () => {
  it('expires a request after its TTL with 4001', async () => {
    const { r, advance } = registry();
    const { approved } = r.add(view(), 60_000);
    advance(59_999);
    expect(r.size).toBe(1);
    advance(1);
    await expect(approved).rejects.toMatchObject({ code: 4001, shortMessage: expect.stringContaining('expired') });
  });

  it('blocks an origin for 60 s after 3 rejections within 30 s', async () => {
    const { r, advance } = registry();
    for (let i = 0; i < 3; i++) {
      const { id, approved } = r.add(view(), 60_000);
      approved.catch(() => undefined);
      r.decide(id, { approve: false });
      advance(1_000);
    }
    expect(() => r.add(view(), 60_000)).toThrow(/paused/);
    r.add(view('https://b.example'), 60_000).approved.catch(() => undefined);
    advance(60_000);
    r.add(view(), 60_000).approved.catch(() => undefined);
    expect(r.size).toBe(1);
  });

  it('holds at most 20 pending requests in all (-32002: a code dapp libraries do not retry)', () => {
    const { r } = registry();
    for (let i = 0; i < MAX_PENDING_TOTAL; i++)
      r.add(view(`https://s${i}.example`), 60_000).approved.catch(() => undefined);
    expect(() => r.add(view('https://one-more.example'), 60_000)).toThrow(expect.objectContaining({ code: -32002 }));
  });

  it('rejects everything on lock and forgets ids', async () => {
    const { r } = registry();
    const { id, approved } = r.add(view(), 60_000);
    r.rejectAll(() => disconnected('locked'));
    await expect(approved).rejects.toMatchObject({ code: 4900 });
    expect(() => r.decide(id, { approve: true, digest: view().digest })).toThrow(/no longer pending/);
  });

  it(
    'rebuilds a pending artifact at refreshAt; the ' + 'superseded digest cannot be approved, the new one can',
    async () => {
      const { r, advance } = registry();
      const d1 = `0x${'1'.repeat(64)}` as const;
      const d2 = `0x${'2'.repeat(64)}` as const;
      let rebuilds = 0;
      const { id, approved } = r.add({ ...view(), refreshAt: 1_000_000 + 20_000 }, 60_000, async () => {
        rebuilds++;
        return { lines: ['fresh'], flags: [], digest: d2, refreshAt: 1_000_000 + 40_000 };
      });
      advance(19_999);
      expect(rebuilds).toBe(0);
      advance(1);
      await Promise.resolve();
      await Promise.resolve();
      expect(rebuilds).toBe(1);
      expect(r.list()[0]).toMatchObject({ digest: d2, lines: ['fresh'] });
      expect(() => r.decide(id, { approve: true, digest: d1 })).toThrow(ApprovalChangedError);
      expect(r.size).toBe(1);
      r.decide(id, { approve: true, digest: d2 });
      await expect(approved).resolves.toMatchObject({ digest: d2 });
    },
  );

  it('cancels a pending request whose artifact cannot be rebuilt', async () => {
    const { r, advance } = registry();
    const { approved } = r.add({ ...view(), refreshAt: 1_000_000 + 20_000 }, 60_000, async () => {
      throw new Error('exp passed');
    });
    advance(20_000);
    await expect(approved).rejects.toMatchObject({ code: 4001, shortMessage: expect.stringContaining('ask again') });
    expect(r.size).toBe(0);
  });
});
