/**
 * The background's browser notifications: the rules (`lib/notifications/
 * rules.ts`) fed by every stream push (`BackgroundStreams.onPush`), raised through a thin
 * `notifications.create` adapter — so they come from the background, with the popup closed. The
 * preferences are read from their own record (`lib/notifications/prefs.ts`) and cached until
 * `notifications.set` changes them. Instrument names and ticks come from one public instruments read
 * (cached for the worker's life; retried after a minute when it failed).
 *
 * Stream outages: a non-live status starts a timer to `streamDownSeconds`; when it fires, the rule is
 * asked with whether a grant is live (and the vault unlocked: a stream closed by lock is not an outage);
 * while the stream is still down and no grant is live it asks again every `RECHECK_MS`.
 *
 * Bursts: a fill or cancel notice is held (`createNoticeBursts`) and raised when its kind's window
 * closes, `BURST_MS` (1 s) after the first of that kind — alone as it is, two or more (a batch the venue
 * filled at once, another client cancelling every order) as one summary notification. One timer, set to
 * the earliest window; it flushes at the window's end even when an injected clock lags behind.
 *
 * A notification carries an instrument, a side, sizes and prices — never an account secret, a key or a
 * header (the rules' inputs are the pushes, which carry none).
 */
import type { NOTIFICATIONS_CONTRACT } from '../messaging/notifications';
import type { StreamPush } from '../messaging/streams';
import { readNotificationPrefs, writeNotificationPrefs, type NotificationPrefs } from '../notifications/prefs';
import { createNotificationRules, type InstrumentInfo } from '../notifications/rules';
import { createNoticeBursts } from '../notifications/bursts';
import type { Notice } from '../notifications/notice';
import type { GrantService } from '../grants/service';
import type { SigningService } from '../signer/service';
import type { VenueReads } from '../reads/venue-reads';
import type { VaultDb } from '../vault/db';
import type { Vault } from '../vault/vault';
import type { ContractHandlers } from './procedures/deps';

/** The part of `browser.notifications` used: `create(id, options)` (Chrome needs `iconUrl` for `basic`). */
export type NotificationsApi = {
  create: (
    id: string,
    options: { type: 'basic'; iconUrl: string; title: string; message: string; priority?: number },
  ) => Promise<unknown>;
};

/** How often a pending stream-down check is repeated while no grant is live (ms). */
const RECHECK_MS = 15_000;
/** After a failed instruments read, how long before another (ms). */
const INSTRUMENTS_RETRY_MS = 60_000;

/**
 * What the notifications need; `browser.notifications` is absent where the permission is missing (nothing is raised
 * then).
 */
export type BackgroundNotificationsDeps = {
  browser: { runtime: { getURL: (path: string) => string }; notifications?: NotificationsApi };
  db: VaultDb;
  vault: Pick<Vault, 'unlocked'>;
  grants: Pick<GrantService, 'anyLive'>;
  service: Pick<SigningService, 'clobCancels'>;
  /** The venue reads (the instrument names a notification shows). */
  reads: Pick<VenueReads, 'perpsRead'>;
  now?: () => number;
};

/** The running notifications: `onPush` (give it to `BackgroundStreams.onPush`), the two procedures, `stop`. */
export type BackgroundNotifications = {
  onPush: (push: StreamPush) => void;
  /**
   * Tells the person that a submission (`what`: "order", "withdrawal", a command type) has no audit
   * entry of its answer: the store refused the write after the answer went back (`SigningService`'s
   * `onUnrecorded`), or — `stopped` — the worker stopped (or the browser died) after sending it and before
   * recording its answer: found in the audit journal at the first unlock after, asked of the venue
   * (`venue`: it holds it, or not; undefined: not asked) and recorded (`recorded: false`: the entry could
   * not be written either). Raised whatever the preferences say; carries no secret.
   */
  unrecorded: (
    what: string,
    o?: { stopped?: boolean; venue?: 'held' | 'absent' | undefined; recorded?: boolean },
  ) => void;
  /**
   * The browser discarded Countersign's records; `recorded` orders found at the venues were added to the audit log,
   * `unasked` venues could not be asked.
   */
  storageLost: (report: { recorded: number; unasked: string[] }) => void;
  procedures: ContractHandlers<typeof NOTIFICATIONS_CONTRACT>;
  stop: () => void;
};

/** Builds the notifications (see the module comment). Throws nothing; a failed `create` is dropped. */
export function createBackgroundNotifications(d: BackgroundNotificationsDeps): BackgroundNotifications {
  const now = d.now ?? Date.now;
  const instruments = new Map<number, InstrumentInfo>();
  let instrumentsAt = -Infinity;
  let instrumentsLoaded = false;
  let prefs: Promise<NotificationPrefs> | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let burstTimer: ReturnType<typeof setTimeout> | undefined;
  const bursts = createNoticeBursts();
  let unrecordedCount = 0;
  let queue: Promise<void> = Promise.resolve();
  const rules = createNotificationRules(
    (iid) => instruments.get(iid),
    (orderId) => d.service.clobCancels.covers(orderId),
  );
  const iconUrl = d.browser.runtime.getURL('/icon/128.png');

  const currentPrefs = () =>
    (prefs ??= readNotificationPrefs(d.db).catch((e: unknown) => {
      prefs = undefined;
      throw e;
    }));

  async function loadInstruments(): Promise<void> {
    if (instrumentsLoaded || now() - instrumentsAt < INSTRUMENTS_RETRY_MS) return;
    instrumentsAt = now();
    try {
      for (const i of await d.reads.perpsRead(undefined, 'instruments')) {
        instruments.set(i.instrument_id, {
          symbol: i.symbol,
          tick: i.tick_size ?? (i.price_decimals > 0 ? `0.${'0'.repeat(i.price_decimals - 1)}1` : '1'),
        });
      }
      instrumentsLoaded = true;
    } catch {
      /* names fall back to `#iid`; retried later */
    }
  }

  function raise(n: Notice): void {
    void d.browser.notifications
      ?.create(n.id, {
        type: 'basic',
        iconUrl,
        title: n.title,
        message: n.message,
        priority: n.kind === 'fill' ? 0 : 1,
      })
      .catch(() => undefined);
  }

  function schedule(p: NotificationPrefs): void {
    clearTimeout(timer);
    const due = rules.streamDownDueAt(p);
    if (due === undefined) return;
    timer = setTimeout(() => void (queue = queue.then(checkDown)), Math.max(0, due - now()));
  }

  async function checkDown(): Promise<void> {
    const p = await currentPrefs();
    const grantLive = d.vault.unlocked && (await d.grants.anyLive().catch(() => false));
    const n = rules.checkStreamDown(p, now(), grantLive);
    if (n) raise(n);
    else if (rules.streamDownDueAt(p) !== undefined)
      timer = setTimeout(() => void (queue = queue.then(checkDown)), RECHECK_MS);
  }

  /** Sets the one burst timer to the earliest window's end; at it, raises what closed (and sets it again). */
  function scheduleBursts(): void {
    clearTimeout(burstTimer);
    const due = bursts.dueAt();
    if (due === undefined) return;
    burstTimer = setTimeout(
      () => {
        queue = queue.then(() => {
          for (const n of bursts.flush(Math.max(now(), due))) raise(n);
          scheduleBursts();
        });
      },
      Math.max(0, due - now()),
    );
  }

  async function handle(push: StreamPush): Promise<void> {
    const p = await currentPrefs();
    const k = push.push.kind;
    if (
      (k === 'fills' && p.fills) ||
      (k === 'order' && p.cancels) ||
      ((k === 'portfolio' || k === 'resync') && p.liquidation)
    )
      await loadInstruments();
    const at = now();
    let held = false;
    for (const n of rules.onPush(push, p, at)) {
      if (n.burst) {
        bursts.add({ ...n, burst: n.burst }, at);
        held = true;
      } else raise(n);
    }
    if (held) scheduleBursts();
    if (k === 'status') schedule(p);
  }

  return {
    onPush(push) {
      queue = queue.then(() => handle(push)).catch(() => undefined);
    },
    procedures: {
      'notifications.get': () => currentPrefs(),
      'notifications.set': async (patch) => {
        const next = await writeNotificationPrefs(d.db, patch);
        prefs = Promise.resolve(next);
        return next;
      },
    },
    unrecorded(what, o = {}) {
      // One notification per submission, even two in the same millisecond (`lib/background/page-path.granted.test.ts`).
      const id = `unrecorded-${now()}-${++unrecordedCount}`;
      if (o.stopped && o.recorded === false) {
        raise({
          id,
          kind: 'unrecorded',
          title: 'Not in the audit log',
          message:
            `Countersign stopped after sending this ${what}, before recording the venue's ` +
            `answer, and could not write it to the audit log. Check the venue's history.`,
        });
        return;
      }
      if (o.stopped && o.venue === 'held') {
        raise({
          id,
          kind: 'unrecorded',
          title: 'Sent before Countersign stopped',
          message:
            `Countersign stopped after sending this ${what}, before recording ` +
            `the answer. The venue holds it; it is now in the audit log.`,
        });
        return;
      }
      raise({
        id,
        kind: 'unrecorded',
        title: 'Not in the audit log',
        message: o.stopped
          ? `Countersign stopped after sending this ${what}, before recording ` +
            `the venue's answer (logged as unknown). Check the venue's history.`
          : `Countersign sent this ${what} and the venue answered, but its ` +
            `audit entry could not be written. Check the venue's history.`,
      });
    },
    storageLost({ recorded, unasked }) {
      const asked = unasked.length ? ` ${unasked.join(' and ')} could not be asked; check its history.` : '';
      raise({
        id: `storage-lost-${now()}`,
        kind: 'unrecorded',
        title: "Countersign's records were lost",
        message:
          `The browser discarded Countersign's records after a crash; your keys came back from ` +
          `their copy. ${recorded} order(s) of the last 24 h found at the venues were added to the ` +
          `audit log.${asked} A site's retry of an order sent before the crash is not recognised.`,
      });
    },
    stop: () => {
      clearTimeout(timer);
      clearTimeout(burstTimer);
    },
  };
}
