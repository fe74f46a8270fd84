import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { BACKSTOP_PERIOD_MIN, KEEPALIVE_MS, LIFETIME_ALARM, Lifetime, type LifetimeBrowser } from './lifetime';

function fake() {
  const alarms = new Map<string, { delayInMinutes?: number; periodInMinutes?: number }>();
  let onAlarm: ((a: { name: string }) => void) | undefined;
  const pings = { n: 0 };
  const browser: LifetimeBrowser = {
    runtime: {
      getPlatformInfo: async () => {
        pings.n++;
        return { os: 'linux' };
      },
    },
    alarms: {
      create: (name, info) => void alarms.set(name, info),
      clear: async (name) => alarms.delete(name),
      onAlarm: { addListener: (fn) => void (onAlarm = fn) },
    },
  };
  return { browser, alarms, pings, fire: (name: string) => onAlarm?.({ name }) };
}

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('Lifetime', () => {
  it(
    'while held: an extension API call every 20 s and a 30 s ' +
      'periodic backstop alarm (never shorter than a store build gets)',
    async () => {
      const f = fake();
      const life = new Lifetime({ browser: f.browser });
      await life.start();
      life.hold('dead-man');
      expect(f.alarms.get(LIFETIME_ALARM)).toEqual({ delayInMinutes: 0.5, periodInMinutes: 0.5 });
      expect(BACKSTOP_PERIOD_MIN * 60_000).toBeGreaterThanOrEqual(30_000);
      await vi.advanceTimersByTimeAsync(KEEPALIVE_MS * 3);
      expect(f.pings.n).toBe(3);
      expect(KEEPALIVE_MS).toBeLessThan(30_000);
    },
  );

  it('keeps holding until every reason is released; then stops pinging and clears the alarm', async () => {
    const f = fake();
    const life = new Lifetime({ browser: f.browser });
    await life.start();
    life.hold('dead-man');
    life.hold('stream');
    life.release('dead-man');
    expect(life.held).toEqual(['stream']);
    expect(f.alarms.has(LIFETIME_ALARM)).toBe(true);
    life.release('stream');
    await vi.advanceTimersByTimeAsync(0);
    expect(f.alarms.has(LIFETIME_ALARM)).toBe(false);
    await vi.advanceTimersByTimeAsync(KEEPALIVE_MS * 3);
    expect(f.pings.n).toBe(0);
  });

  it('runs the start hooks on every start, in order; a failing hook does not stop the others', async () => {
    const f = fake();
    const life = new Lifetime({ browser: f.browser });
    const ran: string[] = [];
    life.onStart(() => void ran.push('a'));
    life.onStart(() => {
      throw new Error('boom');
    });
    life.onStart(async () => void ran.push('c'));
    await life.start();
    expect(ran).toEqual(['a', 'c']);
    life.onStart(() => void ran.push('late'));
    await vi.advanceTimersByTimeAsync(0);
    expect(ran).toEqual(['a', 'c', 'late']);
  });

  it(
    'a start where nothing holds clears a backstop alarm left ' +
      'by the previous background; a hook that holds keeps it',
    async () => {
      const f = fake();
      f.alarms.set(LIFETIME_ALARM, { periodInMinutes: 0.5 });
      await new Lifetime({ browser: f.browser }).start();
      expect(f.alarms.has(LIFETIME_ALARM)).toBe(false);
      const g = fake();
      const life = new Lifetime({ browser: g.browser });
      life.onStart(() => life.hold('dead-man'));
      await life.start();
      expect(g.alarms.has(LIFETIME_ALARM)).toBe(true);
      g.fire(LIFETIME_ALARM);
      expect(g.alarms.has(LIFETIME_ALARM)).toBe(true);
    },
  );
});
