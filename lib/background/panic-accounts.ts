/**
 * The panic switch, account by account (see ./panic for the order of its steps and its bound): which
 * keys are at hand for every account the vault holds, the cancels (and closes) of one account at both
 * venues, and the report line of a venue that could not be cancelled — which kill switch will cancel
 * there, and when.
 *
 * Keys at hand: 'unlocked' — every account's unexpired proxy key and order-book credentials; a trading
 * session — only the accounts it kept (the live grants'); 'locked' — none. A key that is stored but not at
 * hand is "sealed", and a perps proxy key past its expiry (with no newer one) is "expired": that venue is
 * not cancelled, and the step says so with the account's kill switch.
 */
import { cancelAll, createOrders } from '../perps/commands';
import { PANIC_PASS, type SigningService } from '../signer/service';
import type { VenueReads } from '../reads/venue-reads';
import type { Vault } from '../vault/vault';
import type { AuthorityTicket } from '../authority/epoch';
import type { DeadManStatus } from './deadman';
import { cancelPolitely, msg, noAnswer, SlowDownError, within } from './panic-requests';
import { ORDER_BOOK_HEARTBEAT_LAPSE_MS, type PanicTiming } from './panic-timing';
import { instrumentLabel } from '../validation/venue-text';

/**
 * What happened at one venue (or to the positions) of one account:
 * - `{ ok: true, detail }` done;
 * - `{ ok: false, error }` the venue answered with an error, or only part was done;
 * - `{ ok: false, error, killSwitch, cancelWithinS?, firesAt?, noAnswer? }` nothing was cancelled there
 *   (`noAnswer`: the venue did not answer; else it said slow down for longer than panic may wait, or the
 *   key is sealed): `killSwitch` names the switch that will cancel (`'none'`: none was armed),
 *   `firesAt` when (Unix ms) and `cancelWithinS` in how many seconds (0 when already due);
 * - `{ skipped }` nothing to do (no key for this venue, not asked).
 */
export type PanicStep =
  | { ok: true; detail: string }
  | { ok: false; error: string }
  | {
      ok: false;
      noAnswer?: true;
      error: string;
      killSwitch: 'auto-cancel' | 'heartbeat lapse' | 'none';
      cancelWithinS?: number;
      firesAt?: number;
    }
  | { skipped: string };

/**
 * One account's lines of the panic report: its address and label, whether it was the active one, each venue's cancels
 * and its closes.
 */
export type PanicAccountReport = {
  account: string;
  label: string;
  active: boolean;
  perps: PanicStep;
  clob: PanicStep;
  positions: PanicStep;
};

/**
 * A key for one venue: usable now, stored but sealed (locked, or a trading session did not keep it), a
 * perps proxy key that expired (orders it placed may still rest; nothing can sign their cancel), or none.
 */
export type KeyAtHand = 'key' | 'sealed' | 'expired' | 'none';
/** One account panic works on, with the keys at hand for each venue. */
export type PanicTarget = { account: string; label: string; active: boolean; perps: KeyAtHand; clob: KeyAtHand };

/** The skipped step of a venue with no key. */
export const NO_KEY = 'no key for this venue';

/**
 * Every account the vault holds (the active one first), with the keys at hand for each venue now
 * (`now` Unix ms: a proxy key past its expiry is no key). Reads metadata only.
 */
export async function panicTargets(vault: Vault, active: string | undefined, now: number): Promise<PanicTarget[]> {
  const owners = await vault.listOwners();
  const open = vault.state !== 'locked';
  const targets = await Promise.all(
    owners.map(async (o): Promise<PanicTarget> => {
      const stored = await vault.storedKeys(o.address);
      const proxy = open && (await vault.listProxies(o.address)).some((p) => p.expiry > now);
      const clob = open && (await vault.hasClobCredentials(o.address));
      const at = (hand: boolean, kept: boolean, expired = false): KeyAtHand =>
        hand ? 'key' : kept ? 'sealed' : expired ? 'expired' : 'none';
      return {
        account: o.address,
        label: o.label,
        active: !!active && o.address.toLowerCase() === active.toLowerCase(),
        perps: at(proxy, stored.proxy, stored.expiredProxy),
        clob: at(clob, stored.clob),
      };
    }),
  );
  return targets.sort((a, b) => Number(b.active) - Number(a.active));
}

/** Why a venue of an account was not cancelled, before the kill-switch sentence is added (`withKillSwitch`). */
type NotCancelled =
  | { why: 'silent' }
  | { why: 'slow'; error: string }
  | { why: 'sealed'; error: string }
  | { why: 'expired'; error: string };

/** An account's row while panic runs: the steps so far and the venues still to be named with their kill switch. */
export type AccountRun = {
  row: PanicAccountReport;
  pending: { perps?: NotCancelled; clob?: NotCancelled };
  perpsDone: boolean;
  clobDone: boolean;
  closing: boolean;
};

/**
 * What one account's cancels need: the signing service, the timing, the end of the venue phase (`until`,
 * Unix ms), the clock, and the authority panic captured right after its halt (`PANIC_SCOPES`).
 */
export type AccountDeps = {
  service: SigningService;
  reads: Pick<VenueReads, 'perpsRead'>;
  timing: PanicTiming;
  until: number;
  now: () => number;
  closePositions: boolean;
  authority: AuthorityTicket;
};

/**
 * How many perps orders `account` has open (`undefined`: unknown), read with a deadline of `ms` and drawn
 * from the reserve (a site's spending never blocks it). Panic starts it before its cancel is sent.
 */
export function countOpenPerps(
  reads: Pick<VenueReads, 'perpsRead'>,
  account: string,
  ms: number,
): Promise<number | undefined> {
  return within(reads.perpsRead(account, 'openOrders', undefined, { timeoutMs: ms, draw: 'reserve' }), ms)
    .then((x) => (Array.isArray(x) ? x.length : undefined))
    .catch(() => undefined);
}

/** How long panic's perps cancel waits for the open-order count it reports (ms). */
const COUNT_WAIT_MS = 500;

/** `p`'s value when it comes within `ms`, else `undefined` (never rejects while `p` does not). */
function firstWithin<T>(p: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), ms)));
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

/**
 * Starts one account's row (`run.row` is filled in as its steps finish; `openPerps` the count of its open
 * perps orders read before the cancel, `countOpenPerps`): perps `cancelAll` and order-book
 * `DELETE /cancel-all` in parallel, each politely (`cancelPolitely`); then, when asked and the perps
 * cancel succeeded, the closes. Resolves when both venues are done; never throws.
 */
export function cancelAccount(
  t: PanicTarget,
  d: AccountDeps,
  openPerps: Promise<number | undefined> = Promise.resolve(undefined),
): { run: AccountRun; done: Promise<void> } {
  const row: PanicAccountReport = {
    account: t.account,
    label: t.label,
    active: t.active,
    perps: { skipped: NO_KEY },
    clob: { skipped: NO_KEY },
    positions: { skipped: 'not asked' },
  };
  const run: AccountRun = { row, pending: {}, perpsDone: false, clobDone: false, closing: false };
  const ms = d.timing.requestTimeoutMs;
  const pass = { pass: PANIC_PASS, timeoutMs: ms, authority: d.authority } as const;
  const sealed = (venue: string): NotCancelled => ({
    why: 'sealed',
    error: `not cancelled: its ${venue} key is sealed until you unlock Countersign`,
  });
  const failed = (venue: 'perps' | 'clob', e: unknown): PanicStep => {
    if (e instanceof SlowDownError) run.pending[venue] = { why: 'slow', error: e.shortMessage };
    else if (noAnswer(e)) run.pending[venue] = { why: 'silent' };
    return { ok: false, error: noAnswer(e) ? 'did not answer' : msg(e) };
  };
  const perps = async () => {
    if (t.perps !== 'key') {
      if (t.perps === 'sealed') run.pending.perps = sealed('perps');
      if (t.perps === 'expired')
        run.pending.perps = {
          why: 'expired',
          error: 'not cancelled: its perps proxy key expired — issue a new one to cancel what it placed',
        };
      const notClosed =
        t.perps === 'sealed'
          ? 'the perps key is sealed until you unlock Countersign'
          : t.perps === 'expired'
            ? 'the perps proxy key expired'
            : undefined;
      if (d.closePositions)
        row.positions = notClosed ? { ok: false, error: `not closed: ${notClosed}` } : { skipped: NO_KEY };
      run.perpsDone = true;
      return;
    }
    try {
      // The count must be read before the cancel lands (read after it, it says 0); it may hold the cancel
      // back by at most COUNT_WAIT_MS, and a count that comes later is not used.
      const n = await firstWithin(openPerps, Math.min(COUNT_WAIT_MS, ms));
      await cancelPolitely(
        () =>
          d.service.perpsSend(t.account, cancelAll({}), {
            origin: 'panic',
            summary: 'Panic: cancel every perps order',
            ...pass,
          }),
        { ms, until: d.until, now: d.now },
      );
      row.perps = { ok: true, detail: n === undefined ? 'every open order cancelled' : `${n} open order(s) cancelled` };
    } catch (e) {
      row.perps = failed('perps', e);
    }
    run.perpsDone = true;
    if (!d.closePositions) return;
    if (!('ok' in row.perps && row.perps.ok)) {
      row.positions = { ok: false, error: 'not closed: the perps cancel did not succeed — check the venue' };
      return;
    }
    run.closing = true;
    row.positions = await closeAll(d.service, d.reads, t.account, d.timing, d.authority);
    run.closing = false;
  };
  const clob = async () => {
    if (t.clob !== 'key') {
      if (t.clob === 'sealed') run.pending.clob = sealed('order-book');
      run.clobDone = true;
      return;
    }
    try {
      const r = await cancelPolitely(() => d.service.clobCancelAll(t.account, pass), {
        ms,
        until: d.until,
        now: d.now,
      });
      const left = Object.keys(r.not_canceled ?? {}).length;
      row.clob = left
        ? { ok: false, error: `${r.canceled.length} cancelled, ${left} not — check the venue` }
        : { ok: true, detail: `${r.canceled.length} open order(s) cancelled` };
    } catch (e) {
      row.clob = failed('clob', e);
    }
    run.clobDone = true;
  };
  return { run, done: Promise.all([perps(), clob()]).then(() => undefined) };
}

/**
 * Ends an account's row once the venue phase is over (done or cut at its bound): a venue still running
 * did not answer in time; every venue that was not cancelled is named with the account's kill switch
 * from the dead-man's latest `states` (`now` Unix ms).
 */
export function finishAccount(run: AccountRun, states: readonly DeadManStatus[], now: number): PanicAccountReport {
  const { row, pending } = run;
  if (!run.perpsDone) ((row.perps = { ok: false, error: 'did not answer' }), (pending.perps = { why: 'silent' }));
  if (!run.clobDone) ((row.clob = { ok: false, error: 'did not answer' }), (pending.clob = { why: 'silent' }));
  if (run.closing)
    row.positions = {
      ok: false,
      error: 'no answer in time: some positions may or may not have been closed — check the venue',
    };
  const mine = states.flatMap((s) => s.venues).filter((v) => v.account.toLowerCase() === row.account.toLowerCase());
  const latest = (venue: 'perps' | 'clob', k: 'perpsCancelAt' | 'lastHeartbeat') =>
    mine
      .filter((v) => v.venue === venue)
      .reduce<number | undefined>((m, v) => (v[k] === undefined ? m : Math.max(m ?? 0, v[k]!)), undefined);
  const hb = latest('clob', 'lastHeartbeat');
  if (pending.perps) row.perps = withKillSwitch('perps', pending.perps, latest('perps', 'perpsCancelAt'), now);
  if (pending.clob)
    row.clob = withKillSwitch(
      'clob',
      pending.clob,
      hb === undefined ? undefined : hb + ORDER_BOOK_HEARTBEAT_LAPSE_MS,
      now,
    );
  return row;
}

const secondsUntil = (at: number, now: number) => Math.max(0, Math.ceil((at - now) / 1000));

/** The step of a venue that was not cancelled, with the kill switch that will cancel there (`at`, Unix ms) or none. */
function withKillSwitch(venue: 'perps' | 'clob', why: NotCancelled, at: number | undefined, now: number): PanicStep {
  const name = venue === 'perps' ? 'auto-cancel' : 'heartbeat lapse';
  const head = why.why === 'silent' ? 'did not answer' : why.error;
  const silent = why.why === 'silent' ? { noAnswer: true as const } : {};
  if (at === undefined)
    return { ok: false, ...silent, killSwitch: 'none', error: `${head} — no kill switch was armed — check the venue` };
  const s = secondsUntil(at, now);
  return {
    ok: false,
    ...silent,
    killSwitch: name,
    cancelWithinS: s,
    firesAt: at,
    error:
      s > 0
        ? `${head} — its kill switch (${name}) will cancel within ${s} s`
        : `${head} — its kill switch (${name}) is already due (for ${Math.floor((now - at) / 1000)} ` +
          `s): the venue cancels as soon as it runs again — check the venue`,
  };
}

/**
 * Closes every perps position of `account` with reduce-only IOC market orders in parallel (never retried).
 * The step names each position by its instrument id and says "refused by the venue" for a refused close:
 * the gateway's own words (its symbol, its error text) never reach the report.
 */
async function closeAll(
  service: SigningService,
  reads: Pick<VenueReads, 'perpsRead'>,
  account: string,
  t: PanicTiming,
  authority: AuthorityTicket,
): Promise<PanicStep> {
  let positions: { instrument_id: number; size: string }[];
  try {
    const portfolio = (await within(
      reads.perpsRead(account, 'portfolio', undefined, { timeoutMs: t.requestTimeoutMs, draw: 'reserve' }),
      t.requestTimeoutMs,
    )) as { positions?: { instrument_id: number; size: string }[] };
    positions = (portfolio.positions ?? []).filter((p) => !/^-?0*(\.0*)?$/.test(p.size));
  } catch (e) {
    return {
      ok: false,
      error: noAnswer(e)
        ? 'not closed: the venue did not answer the positions read — check the venue'
        : `not closed: ${msg(e)}`,
    };
  }
  if (positions.length === 0) return { ok: true, detail: 'no open positions' };
  const results = await Promise.allSettled(
    positions.map((p) =>
      within(
        service.perpsSend(
          account,
          createOrders({
            orders: [
              { iid: p.instrument_id, buy: p.size.startsWith('-'), qty: p.size.replace('-', ''), tif: 'ioc', ro: true },
            ],
          }),
          {
            origin: 'panic',
            summary: `Panic: close ${instrumentName(p.instrument_id)}`,
            pass: PANIC_PASS,
            timeoutMs: t.requestTimeoutMs,
            authority,
          },
        ),
        t.requestTimeoutMs,
      ),
    ),
  );
  const closed: string[] = [];
  const failed: string[] = [];
  const unknown: string[] = [];
  results.forEach((r, i) => {
    const name = instrumentName(positions[i]!.instrument_id);
    const ack =
      r.status === 'fulfilled' && Array.isArray(r.value) ? (r.value[0] as { status?: unknown } | undefined) : undefined;
    if (r.status === 'fulfilled' && ack?.status !== 'err') closed.push(name);
    else if (r.status === 'fulfilled') failed.push(`${name}: refused by the venue`);
    else if (noAnswer(r.reason)) unknown.push(name);
    else failed.push(`${name}: ${msg(r.reason)}`);
  });
  if (!failed.length && !unknown.length) return { ok: true, detail: `closed ${closed.join(', ')}` };
  return {
    ok: false,
    error: [
      `closed ${closed.join(', ') || 'none'}`,
      ...(failed.length ? [`failed ${failed.join('; ')}`] : []),
      ...(unknown.length ? [`no answer for ${unknown.join(', ')} — may or may not be closed, check the venue`] : []),
    ].join('; '),
  };
}

/**
 * How the report names a position: its instrument id (`instrument #2`, as every window names it without a read), never
 * the gateway's symbol text.
 */
const instrumentName = (iid: unknown): string =>
  typeof iid === 'number' && Number.isSafeInteger(iid) ? instrumentLabel(iid, undefined) : 'an instrument';

/** Whether a step is fine for the report's overall `ok`: done, or nothing to do. */
export const stepOk = (s: PanicStep): boolean => ('skipped' in s ? true : s.ok);
