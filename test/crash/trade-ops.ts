/**
 * The trading operations of the trade kills (test-only, `trade-kills.ts`): each prepares what it needs
 * (a standing grant approved in its window, resting orders), calls `begin()` right before its timed part
 * (the kill's clock and the mark of the venues' orders start there), starts that part without waiting for
 * it, and says how to read its answers and what to check after the relaunch beside the common invariants.
 *
 * Every request is distinct by its size (perps ETH-PERP post-only buys at 3 100, well under the book;
 * order-book BUYs at 0.24-0.25 on the first market's first token); keyed requests carry an
 * `idempotencyKey` and, on perps, a client order id `c` (32 lowercase hex, from the seed's PRNG).
 */
import type { Page } from 'playwright-core';
import type { RunningSandbox } from '../../lib/sandbox/server';
import type { Reply, Running, seeded } from './harness';
import { overCap, resting, type Accepted } from './trade-checks';
import {
  answerWords,
  approveIfAsked,
  armedWindow,
  clickApprove,
  grantInWindow,
  openDemo,
  pageRequest,
  type Caps,
  type PageAnswer,
} from './trade-page';

/** The trading operations a kill lands in. */
export const TRADE_OPS = [
  'grantedBurst',
  'approvedOrder',
  'retrySameKey',
  'retrySameKeyBook',
  'revoke',
  'panic',
  'settings',
] as const;
/** One of `TRADE_OPS`. */
export type TradeOp = (typeof TRADE_OPS)[number];

/**
 * What an operation gets: the seed, its PRNG, the sandbox, the running browser, the connected demo page,
 * the account (lower-case), the planned kill (ms after `begin`), and `begin` (awaited right before the
 * timed part: it reads the audit log's size and marks the venues' orders).
 */
export type TradeCtx = {
  seed: number;
  rng: ReturnType<typeof seeded>;
  sandbox: RunningSandbox;
  r: Running;
  demo: Page;
  owner: string;
  killAtMs: number;
  begin: () => Promise<void>;
};

/** A problem list and notes (information that breaks nothing). */
type Findings = { problems: string[]; notes: string[] };

/**
 * An operation under way: `answer` settles when every answer it waits for came (or the browser died);
 * `answers()` how many came so far, in words, and when the last did (Unix ms); `after`, run after the
 * relaunch and unlock and before the checks (the keyed retry), answers notes; `check`, the operation's own
 * invariants over what the venues accepted since `begin`.
 */
export type Started = {
  answer: Promise<unknown>;
  answers: () => { count: number; words: string; lastAt?: number };
  after?: (r: Running) => Promise<string[]>;
  check?: (r: Running, a: Accepted) => Promise<Findings>;
};

/** The grant's caps: ~5 of the burst's 8 orders fit in 24 h (0.05 + … + 0.09 ETH at the 3 120.5 mark ≈ 1 092 USDC). */
const CAPS: Caps = { perOrder: '400', daily: '1100' };
/** Orders in a burst. */
const BURST = 8;

/** A 32-hex-digit client order id from the seed's PRNG. */
const coid = (c: TradeCtx) => Array.from({ length: 32 }, () => '0123456789abcdef'[c.rng.int(0, 15)]).join('');
/** ETH-PERP size of `k` lots (0.01 each), written as the venue and the audit summary write it ("0.1", not "0.10"). */
const lots = (k: number) => String(k / 100);
/** A `perps_sendCommand` of one post-only ETH-PERP buy at 3 100 with client order id `c`, keyed by `key` when given. */
const perpsParams = (qty: string, c: string, key?: string) => ({
  op: { type: 'createOrders', args: [{ iid: 2, buy: true, qty, p: '3100', tif: 'gtc', po: true, c }] },
  ...(key ? { idempotencyKey: key } : {}),
});
/** The order book's first token (the demo market's "Yes"). */
const token = (s: RunningSandbox) => s.ctx.clob.markets[0]?.tokenIds[0] ?? '';
/** A `clob_postOrders` of one GTC BUY of `size` shares at 0.25, keyed by `key`. */
const bookParams = (s: RunningSandbox, size: string, key: string) => ({
  orders: [{ tokenId: token(s), side: 'BUY', price: '0.25', size, orderType: 'GTC' }],
  idempotencyKey: key,
});
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Tracks page answers: each promise of `requests` is recorded as it settles (a browser that died leaves it unanswered).
 */
function track(requests: Promise<PageAnswer>[]): Pick<Started, 'answer' | 'answers'> {
  const got: (PageAnswer | undefined)[] = requests.map(() => undefined);
  let lastAt: number | undefined;
  const answer = Promise.allSettled(
    requests.map((p, i) =>
      p.then((a) => {
        got[i] = a;
        lastAt = Date.now();
      }),
    ),
  );
  return {
    answer,
    answers: () => {
      const count = got.filter(Boolean).length;
      const ok = got.filter((a) => a?.ok).length;
      const words = requests.length === 1 ? answerWords(got[0]) : `${count}/${requests.length} answered, ${ok} ok`;
      return { count, words, ...(lastAt === undefined ? {} : { lastAt }) };
    },
  };
}

/** Tracks one popup procedure's reply, keeping it for the checks. */
function trackCall(call: Promise<Reply>): Pick<Started, 'answer' | 'answers'> & { reply: () => Reply | undefined } {
  let reply: Reply | undefined;
  let lastAt: number | undefined;
  const answer = call.then((x) => {
    reply = x;
    lastAt = Date.now();
  });
  return {
    answer,
    reply: () => reply,
    answers: () => ({
      count: reply ? 1 : 0,
      words: reply ? (reply.ok ? 'answered ok' : `answered ${reply.error?.name}`) : 'no answer',
      ...(lastAt === undefined ? {} : { lastAt }),
    }),
  };
}

/** Grants the demo page a perps permission (`CAPS`) from the window of a 0.01 ETH-PERP order, as a person does. */
function grantPerps(c: TradeCtx): Promise<void> {
  return grantInWindow(c.r, c.demo, 'perps_sendCommand', perpsParams(lots(1), coid(c)), CAPS);
}

/** Fires `BURST` keyed orders (0.05, 0.06 … ETH) from the page at once, right after `begin`; their client order ids. */
async function burst(c: TradeCtx, tag: string): Promise<Pick<Started, 'answer' | 'answers'> & { coids: Set<string> }> {
  const requests = Array.from({ length: BURST }, (_, i) => ({
    c: coid(c),
    params: (cid: string) => perpsParams(lots(5 + i), cid, `${tag}-${c.seed}-${i}`),
  }));
  await c.begin();
  return {
    ...track(requests.map((x) => pageRequest(c.demo, 'perps_sendCommand', x.params(x.c)))),
    coids: new Set(requests.map((x) => x.c)),
  };
}

/** grantedBurst: a grant whose 24 h cap lets about 5 of 8 keyed orders through; the kill lands inside the burst. */
async function grantedBurst(c: TradeCtx): Promise<Started> {
  await grantPerps(c);
  const b = await burst(c, 'burst');
  return { ...b, check: async (_r, a) => ({ problems: overCap(c.sandbox, a, b.coids, CAPS.daily), notes: [] }) };
}

/**
 * Sends `method(params)` from the page, waits until its window is armed, then `begin`s and clicks Approve:
 * the kill lands around the approval and the send.
 */
async function approvedInWindow(
  c: TradeCtx,
  method: string,
  params: unknown,
): Promise<Pick<Started, 'answer' | 'answers'>> {
  const t = track([pageRequest(c.demo, method, params)]);
  const w = await armedWindow(c.r.ctx);
  if (!w) throw new Error(`no approval window armed for ${method}`);
  await c.begin();
  void clickApprove(w).catch(() => undefined);
  return t;
}

/** approvedOrder: a page order outside any grant (0.2 ETH, with a client order id), approved in its window. */
function approvedOrder(c: TradeCtx): Promise<Started> {
  return approvedInWindow(c, 'perps_sendCommand', perpsParams(lots(20), coid(c)));
}

/**
 * retrySameKey / retrySameKeyBook: a keyed order approved in its window and killed in flight; after the
 * relaunch the page (opened again; its connection is stored) sends the very same request. A window the
 * retry opens is approved, as a person who takes it for the same order would: the venue must still hold
 * at most one order for the key (the common "nothing sent twice" check reads it).
 */
async function retrySameKey(c: TradeCtx, venue: 'perps' | 'book'): Promise<Started> {
  const key = `retry-${venue}-${c.seed}-${c.rng.int(0, 1e9)}`;
  const [method, params] =
    venue === 'perps'
      ? ['perps_sendCommand', perpsParams(lots(21), coid(c), key)]
      : ['clob_postOrders', bookParams(c.sandbox, '12', key)];
  const t = await approvedInWindow(c, method, params);
  return {
    ...t,
    after: async (r) => {
      const demo = await openDemo(r, c.sandbox);
      let answered = false;
      const again = pageRequest(demo, method, params).then((a) => {
        answered = true;
        return a;
      });
      const asked = await approveIfAsked(r.ctx, 10_000, () => answered);
      const a = await Promise.race([again, sleep(15_000).then(() => undefined)]);
      return [
        `the same request again: ${asked ? 'a window opened (approved)' : 'no window'}, answered ` +
          `${answerWords(a)}${a && !a.ok && a.data ? ` ${JSON.stringify(a.data).slice(0, 160)}` : ''}`,
      ];
    },
  };
}

/**
 * revoke: a granted burst, the person revokes the grant in the popup (`grant.revoke`) at a seeded instant
 * before the kill. Notes how many of the site's orders the venue accepted after the revoke was answered.
 */
async function revoke(c: TradeCtx): Promise<Started> {
  await grantPerps(c);
  const list = await c.r.call('grant.list');
  const id = Array.isArray(list.result) ? (list.result[0] as { id?: string } | undefined)?.id : undefined;
  if (!id) throw new Error(`no grant to revoke: ${JSON.stringify(list)}`);
  const revokeAt = c.rng.int(0, c.killAtMs);
  const b = await burst(c, 'revoke');
  let revoked: { at: number; reply: Reply } | undefined;
  const call = sleep(revokeAt).then(() =>
    c.r.call('grant.revoke', { id }).then((reply) => void (revoked = { at: Date.now(), reply })),
  );
  return {
    answer: Promise.allSettled([b.answer, call]),
    answers: () => {
      const x = b.answers();
      return {
        ...x,
        words:
          `${x.words}; revoke asked at ${revokeAt} ms, ` +
          `${revoked ? `answered ${revoked.reply.ok ? 'ok' : revoked.reply.error?.name}` : 'no answer'}`,
      };
    },
    check: async (_r, a) => {
      const done = revoked?.reply.ok ? revoked.at : undefined;
      const late =
        done === undefined
          ? []
          : a.perps.filter((o) => o.coid !== undefined && b.coids.has(o.coid) && o.created > done);
      return {
        problems: overCap(c.sandbox, a, b.coids, CAPS.daily),
        notes: late.length ? [`${late.length} granted order(s) accepted after the revoke was answered`] : [],
      };
    },
  };
}

/**
 * panic: a grant, two granted resting perps orders and one order-book order from the popup, then the
 * person presses panic (`panic.run`, positions kept); the kill lands inside it. What panic left resting is
 * a note, and a problem only when panic had answered that it was done (its report `ok`).
 */
async function panic(c: TradeCtx): Promise<Started> {
  await grantPerps(c);
  for (const k of [3, 4]) {
    const a = await pageRequest(c.demo, 'perps_sendCommand', perpsParams(lots(k), coid(c)));
    if (!a.ok) throw new Error(`a granted resting order before panic: ${answerWords(a)}`);
  }
  const book = await c.r.call('clob.postOrders', {
    account: c.sandbox.demo.owner.address,
    orders: [{ tokenId: token(c.sandbox), side: 'BUY', price: '0.24', size: '20', orderType: 'GTC' }],
  });
  if (!book.ok) throw new Error(`an order-book order before panic: ${JSON.stringify(book.error)}`);
  const before = resting(c.sandbox, c.owner);
  let atAnswer: ReturnType<typeof resting> | undefined;
  await c.begin();
  const t = trackCall(
    c.r.call('panic.run', { closePositions: false }).then((x) => {
      atAnswer = resting(c.sandbox, c.owner);
      return x;
    }),
  );
  return {
    ...t,
    check: async () => {
      const now = resting(c.sandbox, c.owner);
      const reply = t.reply();
      const report = reply?.ok ? (reply.result as { ok?: boolean; problems?: string[] } | undefined) : undefined;
      const notes = [
        `resting before panic: perps ${before.perps}, book ${before.clob}; ` +
          `${atAnswer ? `at its answer: perps ${atAnswer.perps}, book ${atAnswer.clob}; ` : ''}after ` +
          `the relaunch: perps ${now.perps}, book ${now.clob}`,
      ];
      if (report && !report.ok)
        notes.push(`panic reported not done: ${(report.problems ?? []).join(' ').slice(0, 200)}`);
      const left = atAnswer ? atAnswer.perps + atAnswer.clob : 0;
      return {
        problems: report?.ok && left > 0 ? [`panic answered done but ${left} order(s) still rested at the venues`] : [],
        notes,
      };
    },
  };
}

/** The settings fields the settings kill changes, all at once (none of them a venue field). */
const SETTINGS_FIELDS = ['autoLockMinutes', 'slippageBps', 'auditRetentionDays', 'maxPositionUsdc', 'theme'] as const;
type SettingsValues = Record<(typeof SETTINGS_FIELDS)[number], unknown>;

/** Reads the settings fields of `SETTINGS_FIELDS` (throws when `settings.get` fails). */
async function readSettings(r: Running): Promise<SettingsValues> {
  const got = await r.call('settings.get');
  const s = (got.result as { settings?: SettingsValues } | undefined)?.settings;
  if (!got.ok || !s) throw new Error(`settings.get: ${JSON.stringify(got.error)}`);
  return s;
}

/**
 * settings: one `settings.set` of five fields (auto-lock minutes, slippage, audit retention, position cap,
 * theme); after the relaunch they read wholly old or wholly new — new when the change was answered done.
 */
async function settings(c: TradeCtx): Promise<Started> {
  const old = await readSettings(c.r);
  const differ = (v: number, was: unknown) => (v === was ? v + 1 : v);
  const next: SettingsValues = {
    autoLockMinutes: differ(20 + c.rng.int(0, 40), old.autoLockMinutes),
    slippageBps: differ(50 + c.rng.int(0, 200), old.slippageBps),
    auditRetentionDays: differ(30 + c.rng.int(0, 300), old.auditRetentionDays),
    maxPositionUsdc: differ(10_000 + c.rng.int(0, 90_000), old.maxPositionUsdc),
    theme: old.theme === 'dark' ? 'light' : 'dark',
  };
  await c.begin();
  const t = trackCall(c.r.call('settings.set', next));
  return {
    ...t,
    check: async (r) => {
      const now = await readSettings(r);
      const isNew = SETTINGS_FIELDS.filter((f) => now[f] === next[f]);
      const isOld = SETTINGS_FIELDS.filter((f) => now[f] === old[f]);
      const problems: string[] = [];
      if (isNew.length !== SETTINGS_FIELDS.length && isOld.length !== SETTINGS_FIELDS.length)
        problems.push(
          `settings read partly new (${isNew.join(', ') || 'none'}) and partly old (${isOld.join(', ') || 'none'})`,
        );
      else if (t.reply()?.ok && isNew.length !== SETTINGS_FIELDS.length)
        problems.push('the settings change was answered done but the old settings came back');
      return { problems, notes: [] };
    },
  };
}

/** How each operation starts (see the module docstring). */
export const OP_STARTS: Record<TradeOp, (c: TradeCtx) => Promise<Started>> = {
  grantedBurst,
  approvedOrder,
  retrySameKey: (c) => retrySameKey(c, 'perps'),
  retrySameKeyBook: (c) => retrySameKey(c, 'book'),
  revoke,
  panic,
  settings,
};
