/**
 * `PageReads`: what the page path reads from the venues for its words and its grant checks, each answer
 * validated before use: instrument symbols and steps (the window's names and the tick and lot its numbers are
 * padded to), reference prices (a grant's notional and
 * price band) and the grant offer's reads (equity, names). It adds caches and validation over the
 * background's venue reads (`lib/reads/venue-reads.ts` `VenueReads`, reached as `service.reads`), and every
 * read draws on the site's share of the venue's request weight (`draw: 'site'`).
 */
import * as v from 'valibot';
import { borneOut, tickerReference } from '../grants/reference';
import type { RefPrice } from '../grants/evaluate';
import { serviceOfferReads, type OfferReads } from '../grants/offer';
import { readSettings } from '../settings';
import { instrumentLabel, instrumentSteps, instrumentSymbols, shortToken } from '../validation/venue-text';
import type { ProviderDeps } from './context';

const instrumentsAnswer = v.array(v.looseObject({ instrument_id: v.number(), symbol: v.unknown() }));
const tickersAnswer = v.array(
  v.looseObject({
    instrument_id: v.optional(v.unknown()),
    mark_price: v.optional(v.unknown()),
    mid_price: v.optional(v.unknown()),
  }),
);

/**
 * The market channel's references started for one order-book request as it arrived (`PageReads.startClobRefs`), by
 * token id.
 */
export type StartedRefs = ReadonlyMap<string, Promise<RefPrice | undefined>>;

/** The instruments as the words name them: symbols (validated, unique) and steps, by instrument id. */
type InstrumentTable = {
  symbols: Map<number, string>;
  steps: Map<number, { tick?: string; lot?: string }>;
};

/** The page path's venue reads (see the module docstring): one per `ProviderService`, with its caches. */
export class PageReads {
  /** The instruments read once (symbols and steps); reset after a failed read so the next request reads again. */
  private table: Promise<InstrumentTable | undefined> | undefined;
  private symbols: Map<number, string> | undefined;
  private readonly refs = new Map<string, { at: number; ref: Promise<RefPrice | undefined> }>();
  /** Order-book reference reads in flight, by token id (`clobRef`). */
  private readonly clobRefs = new Map<string, Promise<RefPrice | undefined>>();

  constructor(private readonly d: Pick<ProviderDeps, 'service' | 'db' | 'grantBooks'>) {}

  /** The instruments' symbols and steps, read once (undefined while they cannot be read). */
  private instruments(): Promise<InstrumentTable | undefined> {
    this.table ??= this.d.service.reads
      .perpsRead(undefined, 'instruments', undefined, { draw: 'site' })
      .then((raw) => {
        const list = v.parse(instrumentsAnswer, raw);
        const table = { symbols: instrumentSymbols(list), steps: instrumentSteps(list) };
        this.symbols = table.symbols;
        return table;
      })
      .catch(() => {
        this.table = undefined;
        return undefined;
      });
    return this.table;
  }

  /**
   * Names instruments as `BTC-PERP (#1)`: the venue's symbol (validated) beside the id the signature
   * commits to. The instruments are read once; an id alone while they cannot be read.
   */
  async symbol(): Promise<(iid: number) => string> {
    const t = await this.instruments();
    return (iid) => instrumentLabel(iid, t?.symbols.get(iid));
  }

  /**
   * Each instrument's tick and lot as the venue's `instruments` read reports them (decimal strings), for the words'
   * padding (`lib/perps/words.ts`); `{}` for an instrument without them or while they cannot be read.
   */
  async steps(): Promise<(iid: number) => { tick?: string; lot?: string }> {
    const t = await this.instruments();
    return (iid) => t?.steps.get(iid) ?? {};
  }

  /**
   * Reference price of a perps instrument for grant checks: the ticker's `mark_price`, or its
   * `mid_price` when the ticker carries no mark (the source is named in the window's words), borne out
   * by the order book the window prices orders with (`lib/grants/reference.ts`). A reference taken in the
   * last second is reused (as it always was); otherwise it is taken from the public stream once the answer
   * to a ping posted now came (`grantBooks.perpsRef`, `PerpsStreamReference`: the venue's state when it
   * read the ping, as current as a read sent now), else read over REST. Undefined when the ticker has neither.
   */
  async perpsRef(market: string): Promise<RefPrice | undefined> {
    const hit = this.refs.get(market);
    if (hit && Date.now() - hit.at < 1_000) return hit.ref;
    const iid = Number(market);
    // Named through the symbol table already read (no read of its own here: the grant check's reads stay as they are).
    const label = instrumentLabel(iid, this.symbols?.get(iid));
    const overRest = (): Promise<RefPrice | undefined> =>
      Promise.all([
        this.d.service.reads.perpsRead(undefined, 'tickers', { instrument_id: iid }, { draw: 'site' }),
        this.d.service.reads.perpsBook(iid),
      ]).then(([t, book]): RefPrice | undefined => {
        const row = v
          .parse(tickersAnswer, t)
          .find((x) => x.instrument_id === undefined || String(x.instrument_id) === market);
        return tickerReference(
          { mark: row?.mark_price, mid: row?.mid_price },
          { bid: book.bids[0]?.[0], ask: book.asks[0]?.[0] },
          label,
        );
      });
    const at = Date.now();
    const ref = (this.d.grantBooks?.perpsRef(iid, label) ?? Promise.resolve(undefined)).then(
      (streamed) => streamed ?? overRest(),
    );
    if (this.refs.size >= 256) this.refs.clear();
    this.refs.set(market, { at, ref });
    ref.catch(() => this.refs.delete(market));
    return ref;
  }

  /**
   * The order-book midpoint of a token as a reference price for an order that arrived now, borne out by
   * the token's order book (`lib/grants/reference.ts`): from the market channel's book once the `PONG` of a
   * `PING` sent now came (`grantBooks.ref`, `lib/streams/reference.ts`; `started`: the one `startClobRefs` sent when
   * this request arrived), else over REST. Checks made while a REST read
   * is in flight share it; a settled read is never reused: the midpoint comes from the order book itself, which anyone
   * (a site too, from an account of its own) can move for an instant, so a reused read would carry such a move to the
   * orders after it.
   */
  async clobRef(tokenId: string, started?: StartedRefs): Promise<RefPrice | undefined> {
    const streamed = await (started?.get(tokenId) ?? this.d.grantBooks?.ref(tokenId));
    if (streamed) return streamed;
    const inFlight = this.clobRefs.get(tokenId);
    if (inFlight) return inFlight;
    const ref = Promise.all([this.d.service.reads.clobMid(tokenId), this.d.service.reads.clobTop(tokenId)]).then(
      ([mid, top]) =>
        borneOut(
          mid === undefined ? undefined : { price: mid, source: 'midpoint' },
          top,
          `token ${shortToken(tokenId)}`,
        ),
    );
    this.clobRefs.set(tokenId, ref);
    const done = () => {
      if (this.clobRefs.get(tokenId) === ref) this.clobRefs.delete(tokenId);
    };
    ref.then(done, done);
    return ref;
  }

  /**
   * Starts the market channel's reference of each token of an order that just arrived (`grantBooks.ref`: its `PING`
   * goes now, while the orders are built), for `clobRef(tokenId, started)` to take. Nothing over REST: a token the
   * channel cannot judge answers undefined at once.
   */
  startClobRefs(tokenIds: Iterable<string>): StartedRefs {
    const started = new Map<string, Promise<RefPrice | undefined>>();
    const books = this.d.grantBooks;
    if (!books) return started;
    for (const t of new Set(tokenIds)) {
      const ref = books.ref(t);
      ref.catch(() => undefined); // taken (and its refusal met) by `clobRef`, or not needed
      started.set(t, ref);
    }
    return started;
  }

  /** The grant offer's reads (equity, names) over the signing service. */
  offerReads(): OfferReads {
    const { service, db } = this.d;
    return serviceOfferReads({
      perpsRead: (account, name) => service.reads.perpsRead(account, name, undefined, { draw: 'site' }),
      clobCollateral: (account) => service.reads.clobCollateral(account),
      clobUrl: async () => (await readSettings(db)).clobUrl,
      fetchFn: service.gatewayFetch(),
    });
  }
}
