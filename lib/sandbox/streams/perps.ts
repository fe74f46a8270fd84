/**
 * The sandbox's perps session WebSocket at `/perps/v1/ws` (PROTOCOL.md §5.1–§5.2), as the
 * official client `@polymarket/client` 0.2.0 uses it.
 *
 * - `{id, req:"post", op:{type:"auth", args:{proxy, secret}}}` binds the socket to the account of a
 *   registered, unexpired proxy whose secret matches (unsigned, like the venue's; the REST proxy
 *   headers' check); once bound, another proxy is refused (`already_authenticated`). Answer
 *   `{id, data:{status:"ok"|"err", error?}}`.
 * - `{id, req:"sub"|"unsub", chs:[…]}`: account channels (`balances`, `portfolio`, `orders`, `fills`,
 *   `funding`, `deposits`, `withdrawals`, `notifications`, `tpsl` — which covers every `tpsl::<n>`) need
 *   auth; public channels (`trades::`, `bbo::`, `book::`, `tickers::`, `statistics::`, `klines::`) do
 *   not. A subscription to book, bbo, tickers, portfolio or balances is followed by a snapshot.
 * - Commands `{salt, sig, ts, exp?, id, op, req:"post"}` (createOrders, cancelOrders, cancelOrdersCOID,
 *   updateLeverage; also cancelAll and autoCancel) run through the REST route of the same command —
 *   the same verification, replay, weight and handler code —, the request marked so that the route
 *   refuses a command the session's own proxy did not sign (`session_signer_mismatch`, one signature
 *   recovery in all) and the delay hook delays only the answer frame.
 *   The answer is `{id, data:<the REST answer>}`, and only then (≥ 20 ms later, a
 *   separate write) the account's events of that command: `orders`, then `fills`, `funding`,
 *   `tpsl::<n>`, `portfolio`, `balances`.
 * - `{id:0, req:"post", op:{type:"ping"}}` is answered `{id:0, data:{status:"ok"}}`.
 *
 * Events are `{ch, ts, sq, data}` with `sq` counting up by one per channel and socket. `tpsl::<n>`
 * names the instrument ([inferred]: no code shows what `n` is).
 *
 * Mark moves (`setMark`, a trade at another price — another account's included): the account's own
 * events carry no portfolio then, so, as a venue's risk feed does, every session subscribed to
 * `portfolio` whose account holds a position in that instrument gets a `portfolio` event (position
 * value, PnL, liquidation price at the new mark), at most one per account per `MARK_PUSH_MS` of wall
 * time: a move inside the window is sent when it ends (the latest state, once). `tickers::` subscribers
 * of that instrument get its ticker too. [inferred]: the venue's cadence is not shown.
 *
 * The kill switch (`autoCancel`) fires on time, as the venue's does, even when no request comes: every
 * `AUTO_CANCEL_SWEEP_MS` of wall time the accounts whose auto-cancel time (sandbox clock) has passed
 * are swept (a request still fires it first, as before); their cancels go out as `orders` events
 * (`auto_cancelled`).
 */
import type { WebSocket } from 'ws';
import { l2SignaturesEqual } from '../../clob/auth';
import type { SandboxContext } from '../context';
import { portfolioOf } from '../perps/account';
import type { Fill, FundingPayment, PerpsOrder, PerpsVenueEvent } from '../perps/engine';
import * as frames from './perps-frames';
import { parseFrame, sendLater } from './socket';

/** REST route of each command the session accepts (below `/perps`). */
const COMMAND_ROUTES: Readonly<Record<string, { method: string; path: string }>> = {
  createOrders: { method: 'POST', path: '/v1/trade/orders' },
  cancelOrders: { method: 'DELETE', path: '/v1/trade/orders' },
  cancelOrdersCOID: { method: 'DELETE', path: '/v1/trade/orders-coid' },
  updateLeverage: { method: 'PATCH', path: '/v1/trade/leverage' },
  cancelAll: { method: 'DELETE', path: '/v1/trade/orders/all' },
  autoCancel: { method: 'PATCH', path: '/v1/trade/auto-cancel' },
};

/**
 * Time between a command's answer and its events (ms): the official client registers its order waiter
 * only after the acknowledgement's promise settles, so both in one read would lose the event
 * (PROTOCOL.md §5.1 "Ordering rule"; [inferred] the venue's own gap is the network's).
 */
const ACK_GAP_MS = 20;

/** Wall time between two sweeps of due auto-cancels (ms). */
const AUTO_CANCEL_SWEEP_MS = 200;

/** Least wall time between two mark-driven `portfolio` events to one account (ms). */
export const MARK_PUSH_MS = 1_000;

const ACCOUNT_CHANNELS = new Set([
  'balances',
  'portfolio',
  'orders',
  'fills',
  'funding',
  'deposits',
  'withdrawals',
  'notifications',
  'tpsl',
]);
const PUBLIC_CHANNEL =
  /^(?:(trades|bbo|book)::(\d{1,9})|(tickers|statistics)::(all|\d{1,9})|klines::(\d{1,9})::(1m|5m|15m|1h|4h|1d|1w))$/;

/** One open socket: its account once authenticated (`owner`, `proxy` lowercase), channels and `sq` counters. */
type Session = { ws: WebSocket; owner?: string; proxy?: string; chs: Set<string>; sq: Map<string, number> };

/**
 * One account's events since the last flush: each order change as it was then (with its instrument and
 * its `tpsl` state for a trigger order), fills, funding payments, and whether the account changed.
 */
type AccountBatch = {
  orders: {
    iid: number;
    data: ReturnType<typeof frames.orderData>;
    tpsl?: NonNullable<ReturnType<typeof frames.tpslData>>;
  }[];
  fills: Fill[];
  funding: FundingPayment[];
  changed: boolean;
};

/**
 * The perps streams of one sandbox: sessions, the venue listener, and the per-account hold that puts a
 * command's events after its answer. `fetchApp` is the sandbox app's `fetch` (commands reuse REST).
 */
export class PerpsStreams {
  private readonly sessions = new Set<Session>();
  private readonly pending = new Map<string, AccountBatch>();
  private readonly held = new Map<string, number>();
  private readonly books = new Set<number>();
  private readonly trades: PerpsVenueEvent[] = [];
  /** Instruments whose mark moved since the last flush. */
  private readonly marks = new Set<number>();
  /** Wall time (ms) of each account's last mark-driven portfolio event, and its pending trailing one. */
  private readonly markPushedAt = new Map<string, number>();
  private readonly markTimers = new Map<string, ReturnType<typeof setTimeout>>();
  private readonly sweep: ReturnType<typeof setInterval>;
  private scheduled = false;
  private readonly listener = (e: PerpsVenueEvent) => this.onVenueEvent(e);

  constructor(
    private readonly ctx: SandboxContext,
    private readonly fetchApp: (req: Request) => Promise<Response>,
  ) {
    ctx.venue.listeners.add(this.listener);
    this.sweep = setInterval(() => {
      const now = ctx.now();
      for (const a of ctx.venue.accounts.values())
        if (a.autoCancelAt !== undefined && a.autoCancelAt <= now) ctx.venue.checkAutoCancel(a);
    }, AUTO_CANCEL_SWEEP_MS);
    this.sweep.unref?.();
  }

  /** Stops listening to the venue (the sockets are closed by the server). */
  close(): void {
    this.ctx.venue.listeners.delete(this.listener);
    clearInterval(this.sweep);
    for (const t of this.markTimers.values()) clearTimeout(t);
    this.markTimers.clear();
  }

  /** Serves one upgraded socket. */
  attach(ws: WebSocket): void {
    const s: Session = { ws, chs: new Set(), sq: new Map() };
    this.sessions.add(s);
    ws.on('close', () => this.sessions.delete(s));
    ws.on('message', (raw, isBinary) => {
      if (isBinary) return;
      void this.onMessage(s, raw.toString());
    });
  }

  private send(s: Session, frame: object): void {
    sendLater(s.ws, JSON.stringify(frame), this.ctx.delayMs.get('perps') ?? 0);
  }

  private answer(s: Session, id: number, data: unknown): void {
    this.send(s, { id, data });
  }

  private event(s: Session, ch: string, data: unknown): void {
    const sq = (s.sq.get(ch) ?? 0) + 1;
    s.sq.set(ch, sq);
    this.send(s, { ch, ts: this.ctx.now(), sq, data });
  }

  private async onMessage(s: Session, text: string): Promise<void> {
    const msg = parseFrame(text);
    if (!msg) return;
    const id = typeof msg.id === 'number' && Number.isSafeInteger(msg.id) && msg.id >= 0 ? msg.id : undefined;
    if (id === undefined) return;
    const op = msg.op !== null && typeof msg.op === 'object' && !Array.isArray(msg.op) ? msg.op : undefined;
    const type = op && 'type' in op && typeof op.type === 'string' ? op.type : undefined;
    if (msg.req === 'sub' || msg.req === 'unsub') return this.subscribe(s, id, msg.req, msg.chs);
    if (msg.req !== 'post' || !op || !type) return this.answer(s, id, { status: 'err', error: 'invalid_request' });
    if (type === 'ping') return this.answer(s, id, { status: 'ok' });
    if (type === 'auth') return this.auth(s, id, 'args' in op ? op.args : undefined);
    return this.command(s, id, type, msg);
  }

  private auth(s: Session, id: number, args: unknown): void {
    const { proxyIndex, venue } = this.ctx;
    const proxy =
      args !== null && typeof args === 'object' && 'proxy' in args && typeof args.proxy === 'string'
        ? args.proxy.toLowerCase()
        : '';
    const secret =
      args !== null && typeof args === 'object' && 'secret' in args && typeof args.secret === 'string'
        ? args.secret
        : '';
    // A session belongs to one proxy: a second auth naming another is refused (the first stays).
    if (s.proxy !== undefined && s.proxy !== proxy)
      return this.answer(s, id, { status: 'err', error: 'already_authenticated' });
    const owner = proxyIndex.get(proxy);
    const p = owner ? venue.findAccount(owner)?.proxies.get(proxy) : undefined;
    if (!owner || !p || !l2SignaturesEqual(p.secret, secret) || p.expiry <= this.ctx.now())
      return this.answer(s, id, { status: 'err', error: 'unauthorized' });
    s.owner = owner.toLowerCase();
    s.proxy = proxy;
    this.answer(s, id, { status: 'ok' });
  }

  private subscribe(s: Session, id: number, req: 'sub' | 'unsub', chs: unknown): void {
    if (
      !Array.isArray(chs) ||
      chs.length === 0 ||
      chs.length > 100 ||
      !chs.every((c): c is string => typeof c === 'string')
    ) {
      return this.answer(s, id, { status: 'err', error: 'invalid_channels' });
    }
    const unknown = chs.find((c) => !ACCOUNT_CHANNELS.has(c) && !PUBLIC_CHANNEL.test(c));
    if (unknown) return this.answer(s, id, { status: 'err', error: `unknown_channel: ${unknown}` });
    if (req === 'unsub') {
      for (const c of chs) s.chs.delete(c);
      return this.answer(s, id, { status: 'ok' });
    }
    if (!s.owner && chs.some((c) => ACCOUNT_CHANNELS.has(c)))
      return this.answer(s, id, { status: 'err', error: 'unauthenticated' });
    for (const c of chs) s.chs.add(c);
    this.answer(s, id, { status: 'ok' });
    this.snapshot(s, chs);
  }

  /** The current state of the channels just subscribed that have one (book, bbo, tickers, portfolio, balances). */
  private snapshot(s: Session, chs: string[]): void {
    const { venue } = this.ctx;
    const now = this.ctx.now();
    const account = s.owner ? venue.findAccount(s.owner) : undefined;
    for (const ch of chs) {
      const [kind, which] = ch.split('::');
      const inst = which === undefined ? undefined : venue.instruments.get(Number(which));
      if (kind === 'book' && inst) this.event(s, ch, frames.bookData(venue, inst.iid));
      else if (kind === 'bbo' && inst) this.event(s, ch, frames.bboData(venue, inst.iid));
      else if (kind === 'tickers')
        for (const i of which === 'all' ? venue.instruments.values() : inst ? [inst] : [])
          this.event(s, ch, frames.tickerData(this.ctx, i, now));
      else if (ch === 'portfolio' && account) this.event(s, ch, portfolioOf(venue, account, now));
      else if (ch === 'balances' && account) this.event(s, ch, frames.balanceData(account.balance));
    }
  }

  private async command(s: Session, id: number, type: string, msg: Record<string, unknown>): Promise<void> {
    const route = COMMAND_ROUTES[type];
    if (!route) return this.answer(s, id, { status: 'err', error: 'unsupported_command' });
    const { owner, proxy } = s;
    if (!owner || !proxy) return this.answer(s, id, { status: 'err', error: 'unauthenticated' });
    const { id: _id, req: _req, ...envelope } = msg;
    this.held.set(owner, (this.held.get(owner) ?? 0) + 1);
    try {
      // Through the REST route of the command, marked with the session's proxy: the route's one
      // signature recovery also refuses another signer (`session_signer_mismatch`).
      const req = new Request(`http://sandbox/perps${route.path}`, {
        method: route.method,
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(envelope),
      });
      this.ctx.sessionRequests.set(req, proxy);
      const res = await this.fetchApp(req);
      this.answer(s, id, await res.json());
    } catch {
      this.answer(s, id, { status: 'err', error: 'internal_error' });
    } finally {
      // The events follow in a later write: a client reading both in one chunk would see the event
      // before its acknowledgement settled (the official client registers its waiter only then).
      setTimeout(() => {
        const n = (this.held.get(owner) ?? 1) - 1;
        if (n > 0) this.held.set(owner, n);
        else this.held.delete(owner);
        this.flush();
      }, ACK_GAP_MS);
    }
  }

  /**
   * An order's change as the `orders` (and, for a waiting or cancelled trigger order, `tpsl::<iid>`) channel reports it
   * now.
   */
  private orderChange(o: PerpsOrder): AccountBatch['orders'][number] {
    const tpsl = o.trigger ? frames.tpslData(o) : undefined;
    return { iid: o.iid, data: frames.orderData(this.ctx.venue, o), ...(tpsl ? { tpsl } : {}) };
  }

  private batch(owner: string): AccountBatch {
    let b = this.pending.get(owner);
    if (!b) {
      b = { orders: [], fills: [], funding: [], changed: false };
      this.pending.set(owner, b);
    }
    return b;
  }

  private onVenueEvent(e: PerpsVenueEvent): void {
    if (this.sessions.size === 0) return;
    if (e.kind === 'order') this.batch(e.order.owner).orders.push(this.orderChange(e.order));
    else if (e.kind === 'fill') this.batch(e.owner).fills.push(e.fill);
    else if (e.kind === 'funding') this.batch(e.owner).funding.push(e.payment);
    else if (e.kind === 'account') this.batch(e.owner).changed = true;
    else if (e.kind === 'book') this.books.add(e.iid);
    else if (e.kind === 'mark') this.marks.add(e.iid);
    else {
      this.trades.push(e);
      this.marks.add(e.trade.iid);
    }
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => {
        this.scheduled = false;
        this.flush();
      });
    }
  }

  /** Sends what the venue reported since the last flush, except the accounts a command holds. */
  private flush(): void {
    const sent = new Set<string>();
    for (const [owner, b] of this.pending) {
      if (this.held.has(owner)) continue;
      this.pending.delete(owner);
      this.deliverAccount(owner, b);
      if (!b.changed) continue;
      // Its own events carried the portfolio: that is its push of the window (a pending mark push is moot).
      sent.add(owner);
      this.markPushedAt.set(owner, Date.now());
      clearTimeout(this.markTimers.get(owner));
      this.markTimers.delete(owner);
    }
    this.deliverPublic();
    this.deliverMarks(sent);
  }

  /**
   * The mark-driven `portfolio` events: to every account subscribed to `portfolio` holding a position
   * in an instrument whose mark moved, unless its own events just carried one (`sent`; that counts as
   * its push of the window).
   */
  private deliverMarks(sent: Set<string>): void {
    if (this.marks.size === 0) return;
    const iids = [...this.marks];
    this.marks.clear();
    const owners = new Set<string>();
    for (const s of this.sessions) {
      if (!s.owner || !s.chs.has('portfolio')) continue;
      const a = this.ctx.venue.findAccount(s.owner);
      if (a && iids.some((i) => a.positions.has(i))) owners.add(s.owner);
    }
    for (const owner of owners) if (!sent.has(owner)) this.markPush(owner);
  }

  /** Sends `owner`'s portfolio now when its window allows and no command holds it, else once when it does. */
  private markPush(owner: string): void {
    if (this.markTimers.has(owner)) return;
    const wait = (this.markPushedAt.get(owner) ?? -Infinity) + MARK_PUSH_MS - Date.now();
    if (wait > 0 || this.held.has(owner)) {
      const t = setTimeout(
        () => {
          this.markTimers.delete(owner);
          this.markPush(owner);
        },
        Math.max(wait, ACK_GAP_MS),
      );
      this.markTimers.set(owner, t);
      return;
    }
    const { venue } = this.ctx;
    const account = venue.findAccount(owner);
    const targets = [...this.sessions].filter((s) => s.owner === owner && s.chs.has('portfolio'));
    if (!account || targets.length === 0) return;
    this.markPushedAt.set(owner, Date.now());
    const portfolio = portfolioOf(venue, account, this.ctx.now());
    for (const s of targets) this.event(s, 'portfolio', portfolio);
  }

  private deliverAccount(owner: string, b: AccountBatch): void {
    const { venue } = this.ctx;
    const targets = [...this.sessions].filter((s) => s.owner === owner);
    if (targets.length === 0) return;
    const now = this.ctx.now();
    const account = venue.findAccount(owner);
    const portfolio = b.changed && account ? portfolioOf(venue, account, now) : undefined;
    for (const s of targets) {
      if (s.chs.has('orders')) for (const o of b.orders) this.event(s, 'orders', o.data);
      if (b.fills.length && s.chs.has('fills'))
        this.event(
          s,
          'fills',
          b.fills.map((f) => frames.fillData(f, venue.orders.get(f.oid)?.coid)),
        );
      if (s.chs.has('funding')) for (const p of b.funding) this.event(s, 'funding', frames.fundingData(p));
      for (const o of b.orders) {
        if (o.tpsl && (s.chs.has('tpsl') || s.chs.has(`tpsl::${o.iid}`))) this.event(s, `tpsl::${o.iid}`, o.tpsl);
      }
      if (portfolio && s.chs.has('portfolio')) this.event(s, 'portfolio', portfolio);
      if (account && b.changed && s.chs.has('balances')) this.event(s, 'balances', frames.balanceData(account.balance));
    }
  }

  private deliverPublic(): void {
    const { venue } = this.ctx;
    const trades = this.trades.splice(0).flatMap((e) => (e.kind === 'trade' ? [e.trade] : []));
    const changed = new Set([...this.books, ...this.marks, ...trades.map((t) => t.iid)]);
    const books = [...this.books];
    this.books.clear();
    if (changed.size === 0) return;
    const now = this.ctx.now();
    const want = (s: Session, kind: string, iid: number) => s.chs.has(`${kind}::${iid}`) || s.chs.has(`${kind}::all`);
    for (const s of this.sessions) {
      if (![...s.chs].some((c) => c.includes('::'))) continue;
      for (const iid of books) {
        if (want(s, 'book', iid)) this.event(s, `book::${iid}`, frames.bookData(venue, iid));
        if (want(s, 'bbo', iid)) this.event(s, `bbo::${iid}`, frames.bboData(venue, iid));
      }
      for (const iid of changed) {
        const inst = venue.instruments.get(iid);
        if (!inst) continue;
        const mine = trades.filter((t) => t.iid === iid);
        if (mine.length && s.chs.has(`trades::${iid}`)) this.event(s, `trades::${iid}`, mine.map(frames.tradeData));
        for (const scope of [String(iid), 'all']) {
          if (s.chs.has(`tickers::${scope}`))
            this.event(s, `tickers::${scope}`, frames.tickerData(this.ctx, inst, now));
          if (mine.length && s.chs.has(`statistics::${scope}`))
            this.event(s, `statistics::${scope}`, frames.statisticsData(venue, inst, now));
        }
        for (const [name, step] of Object.entries(frames.STREAM_INTERVALS)) {
          if (mine.length && s.chs.has(`klines::${iid}::${name}`))
            this.event(s, `klines::${iid}::${name}`, frames.klinesData(venue, inst, step, now));
        }
      }
    }
  }
}
