/**
 * The background's lifetime in one place: who needs the background awake, and what runs
 * every time it starts. The dead-man timer holds it while a grant is live; the live streams hold it while
 * a socket is open (`hold('streams')` for the perps session, `hold('streams-clob')` for the order-book
 * user channel; `lib/background/streams.ts`).
 *
 * The background lifecycle is a given, not a promise:
 * - Chromium MV3 runs a service worker that stops after 30 s without extension events or extension API
 *   calls (Chrome 110+: each API call resets the idle timer; the 5-minute cap is gone). Chrome's
 *   documented keep-alive is an extension API call every ≈ 20 s ("Extension service worker lifecycle").
 * - Firefox MV3 runs an event page that stops ≈ 30 s (`extensions.background.idle.timeout`) after the
 *   last extension event or API call made by the background to the parent process, even while a content
 *   script holds a port; `setInterval` timers die with it. A parent API call from the background resets
 *   that timer (the parent emits `background-script-reset-idle`, reason `parentApiCall`).
 * - Both wake a stopped background for an alarm. Chromium fires alarms at most every 30 s for packed
 *   extensions (every 1 s unpacked, as in tests), so nothing here relies on a shorter period; Firefox
 *   states no minimum.
 *
 * So, while anything holds the background (`hold(reason)` until the matching `release(reason)`):
 * 1. an extension API call every `KEEPALIVE_MS` (20 s) keeps it awake in both browsers;
 * 2. a periodic alarm every `BACKSTOP_PERIOD_MIN` (0.5 min = 30 s, Chromium's floor for store builds)
 *    is the backstop: if the browser stops the background anyway (memory pressure, DevTools, a bug), the
 *    alarm starts it again within 30 s, and every start runs the `onStart` hooks (the dead-man re-arms
 *    there). The alarm is cleared when the last hold is released and on a start where nobody holds.
 * Holds live in memory: after a restart each owner takes its hold again from its `onStart` hook.
 */

/** The API surface the lifetime uses (webextension-polyfill or a test double). */
export type LifetimeBrowser = {
  runtime: { getPlatformInfo?: () => Promise<unknown> };
  alarms: {
    create: (name: string, info: { delayInMinutes?: number; periodInMinutes?: number }) => unknown;
    clear: (name: string) => Promise<unknown>;
    onAlarm: { addListener: (fn: (alarm: { name: string }) => void) => void };
  };
};

/** The backstop alarm's name. */
export const LIFETIME_ALARM = 'lifetime';
/** How often a held background makes an extension API call (ms): under both browsers' 30 s idle timeout. */
export const KEEPALIVE_MS = 20_000;
/** The backstop alarm's period (minutes): 30 s, the shortest period Chromium grants a packed MV3 extension. */
export const BACKSTOP_PERIOD_MIN = 0.5;

/** A hook run on every background start; errors are swallowed (one hook never stops the others). */
export type StartHook = () => Promise<void> | void;

/**
 * Keeps the background alive while held and runs start hooks. Construct it synchronously in the
 * background's `main` (it registers its alarm listener there), then call `start()` once the vault
 * session is restored.
 */
export class Lifetime {
  private readonly holds = new Set<string>();
  private readonly hooks: StartHook[] = [];
  private timer: ReturnType<typeof setInterval> | undefined;
  private started = false;

  constructor(private readonly o: { browser: LifetimeBrowser }) {
    o.browser.alarms.onAlarm.addListener((alarm) => {
      // Being woken for the alarm is the point; in a running background it is one more keep-alive.
      if (alarm.name === LIFETIME_ALARM && this.started && this.holds.size === 0)
        void this.o.browser.alarms.clear(LIFETIME_ALARM);
    });
  }

  /** Why the background is held now (reasons, in hold order). */
  get held(): string[] {
    return [...this.holds];
  }

  /**
   * Registers `fn` to run on every start (after the vault session is restored); runs it at once when already started.
   */
  onStart(fn: StartHook): void {
    this.hooks.push(fn);
    if (this.started) void this.run(fn);
  }

  /**
   * Runs the start hooks in order (call once per background start). Clears a stale backstop alarm when nothing holds
   * afterwards.
   */
  async start(): Promise<void> {
    this.started = true;
    for (const fn of this.hooks) await this.run(fn);
    if (this.holds.size === 0) await this.o.browser.alarms.clear(LIFETIME_ALARM);
  }

  /** Keeps the background alive until `release(reason)` (idempotent per reason). */
  hold(reason: string): void {
    const first = this.holds.size === 0;
    this.holds.add(reason);
    if (!first) return;
    void this.o.browser.alarms.create(LIFETIME_ALARM, {
      delayInMinutes: BACKSTOP_PERIOD_MIN,
      periodInMinutes: BACKSTOP_PERIOD_MIN,
    });
    this.timer = setInterval(() => void this.ping(), KEEPALIVE_MS);
  }

  /** Ends the hold of `reason`; when none is left, stops the keep-alive and clears the backstop alarm. */
  release(reason: string): void {
    if (!this.holds.delete(reason) || this.holds.size > 0) return;
    clearInterval(this.timer);
    this.timer = undefined;
    void this.o.browser.alarms.clear(LIFETIME_ALARM);
  }

  /** One extension API call (resets the idle timer in Chromium and Firefox). */
  private async ping(): Promise<void> {
    try {
      await this.o.browser.runtime.getPlatformInfo?.();
    } catch {
      /* the call itself is what counts */
    }
  }

  private async run(fn: StartHook): Promise<void> {
    try {
      await fn();
    } catch {
      /* a hook reports its own failure (the dead-man in its status) */
    }
  }
}
