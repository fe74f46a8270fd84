/**
 * Order-book (CLOB) server state for the popup: the catalogue search (keyset paging),
 * the chosen market and outcome with its book (tick, minimum size, levels, fee), the portfolio from the
 * data service (paging), open orders, recent trades, and the answers to the last orders posted.
 * Pure helpers compute what the ticket shows before signing (maker / taker amounts and the fee).
 */
import { computed, signal } from '@preact/signals';
import { orderRequestAmounts, type OrderAmounts } from '../../../lib/clob/amounts';
import { estimateClobMarket, protectedClobPrice, type ClobMarketEstimate } from '../../../lib/clob/market';
import { DEFAULT_SLIPPAGE_BPS } from '../../../lib/perps/risk';
import type { OrderType } from '../../../lib/clob/order';
import { InvalidFieldError } from '../../../lib/validation';
import { formatUnitsMin2 } from '../../../lib/format';
import type { ProcedureOutput } from '../../../lib/messaging/protocol';
import * as v from 'valibot';
import { marketPushSchema, streamPushSchema } from '../../../lib/messaging/streams';
import { Recency } from '../../../lib/streams/books';
import { call as popupCall, messageOf, onStreamPush, type Account } from '../api';
import type { Call, Listen } from './perps';

/** A catalogue market: its outcomes and their token ids (same order). */
export type Market = ProcedureOutput<'catalogue.markets'>['markets'][number];
/** `clob.book`: tick and minimum size, best levels, the ladder (`[price, size]`, best first) and the fee (bp). */
export type BookInfo = ProcedureOutput<'clob.book'>;
/** One answer of `clob.postOrders`, per order. */
export type PostResult = ProcedureOutput<'clob.postOrders'>[number];
/** What the person typed in the order-book ticket (decimal strings; GTD hours as typed). */
export type ClobOrderDraft = {
  side: 'BUY' | 'SELL';
  price: string;
  size: string;
  orderType: OrderType;
  postOnly: boolean;
  gtdHours: string;
};

/** Base units (6 decimals) as a human amount, exactly (never through a float). */
export const units = (base: string) => formatUnitsMin2(base, 6);

/**
 * The price an order is sent at: the typed one, else for a market-style order (FOK / FAK) the best
 * level ± the slippage cap (`capBps`, default `DEFAULT_SLIPPAGE_BPS`), else none.
 */
function clobOrderPrice(
  info: BookInfo | undefined,
  d: Pick<ClobOrderDraft, 'side' | 'price' | 'orderType'>,
  capBps = DEFAULT_SLIPPAGE_BPS,
): string {
  if (d.price || !info || (d.orderType !== 'FOK' && d.orderType !== 'FAK')) return d.price;
  return protectedClobPrice(d.side === 'BUY' ? info.asks : info.bids, d.side, capBps, info.tickSize) ?? '';
}

/**
 * The amounts the order would sign, or why it cannot be built (`field: reason`); empty without price,
 * size or book. A market-style order without a typed price is priced by `clobOrderPrice` and carries
 * its `price` and the visible book's `estimate` (average price, slippage, whether it fills whole).
 */
export function clobPreview(
  info: BookInfo | undefined,
  d: Pick<ClobOrderDraft, 'side' | 'price' | 'size' | 'orderType'>,
  capBps = DEFAULT_SLIPPAGE_BPS,
): { amounts?: OrderAmounts; problem?: string; price?: string; estimate?: ClobMarketEstimate } {
  const price = clobOrderPrice(info, d, capBps);
  if (!info || !price || !d.size) return {};
  try {
    const amounts = orderRequestAmounts({
      side: d.side,
      price,
      size: d.size,
      orderType: d.orderType,
      tickSize: info.tickSize,
    });
    const market = d.orderType === 'FOK' || d.orderType === 'FAK';
    // A market BUY is sized by collateral: the venue spends the USDC at the makers' prices (a better price buys more
    // shares).
    return {
      amounts,
      price,
      ...(market
        ? { estimate: estimateClobMarket(d.side === 'BUY' ? info.asks : info.bids, d.side, d.size, price) }
        : {}),
    };
  } catch (err) {
    return { problem: err instanceof InvalidFieldError ? `${err.field}: ${err.reason}` : 'Invalid order' };
  }
}

/** The fee in USDC base units: `feeRateBps` of the USDC side (maker amount to buy, taker amount to sell). */
export function clobFee(amounts: OrderAmounts, side: 'BUY' | 'SELL', feeRateBps: number): string {
  return (
    (BigInt(side === 'BUY' ? amounts.makerAmount : amounts.takerAmount) * BigInt(feeRateBps)) /
    10_000n
  ).toString();
}

/** A posted order's answer in plain words. */
export function postResultText(r: PostResult): string {
  return r.ok
    ? `Order ${r.orderID.slice(0, 10)}… ${r.status === 'live' ? 'is resting on the book' : r.status}`
    : `Refused: ${r.error}`;
}

/** The order-book store. */
export type ClobStore = ReturnType<typeof createClobStore>;

/**
 * Creates the store for `account`; `start()` loads the first search page, the portfolio, open orders and
 * trades, and listens to the background's pushes: the order-book user channel's order and
 * trade events update the open orders and trades, the market channel's book of the shown token updates
 * the ladder — no REST read. A REST read of the open orders that answers after a newer pushed event
 * keeps the event's state (the snapshot race). `start()` returns the stop.
 */
export function createClobStore(account: Account, call: Call = popupCall, listen: Listen = onStreamPush) {
  const markets = signal<Market[]>([]);
  const cursor = signal<string | null>(null);
  const market = signal<Market | undefined>(undefined);
  const outcome = signal(0);
  const info = signal<BookInfo | undefined>(undefined);
  const open = signal<ProcedureOutput<'clob.openOrders'>['data']>([]);
  const positions = signal<ProcedureOutput<'data.portfolio'>['positions']>([]);
  const value = signal<string | null>(null);
  const posCursor = signal<string | null>(null);
  const trades = signal<ProcedureOutput<'clob.trades'>>([]);
  const error = signal<string | undefined>(undefined);
  const results = signal<string[]>([]);
  const busy = signal(false);
  /** The token of the chosen outcome. */
  const tokenId = computed(() => market.value?.tokenIds[outcome.value]);
  /** The pushed state of each order since the store started (so a slower REST snapshot cannot undo it). */
  const recency = new Recency<string, ProcedureOutput<'clob.openOrders'>['data'][number]>();

  /** Takes one push of the background (validated; another account's is ignored). */
  function onPush(m: unknown): void {
    const mk = v.safeParse(marketPushSchema, m);
    if (mk.success) {
      const p = mk.output.push;
      const cur = info.value;
      if (!cur || !('tokenId' in p) || p.tokenId !== tokenId.value) return;
      if (p.kind === 'clobBook')
        info.value = { ...cur, bids: p.bids, asks: p.asks, bestBid: p.bestBid, bestAsk: p.bestAsk };
      else if (p.kind === 'clobTick') info.value = { ...cur, tickSize: p.tickSize };
      return;
    }
    const r = v.safeParse(streamPushSchema, m);
    if (!r.success || r.output.account.toLowerCase() !== account.address.toLowerCase()) return;
    const p = r.output.push;
    if (p.kind === 'clobOrder') {
      const resting = p.order.status === 'LIVE' || p.order.status === 'DELAYED';
      recency.note(p.order.id, p.order, resting);
      const rest = open.value.filter((o) => o.id !== p.order.id);
      open.value = resting ? [p.order, ...rest] : rest;
    } else if (p.kind === 'clobTrade') {
      // The person's own view of the trade (their order, maker or taker); a trade is one row per role.
      const { id, trader_side } = p.trade;
      trades.value = [p.trade, ...trades.value.filter((t) => t.id !== id || t.trader_side !== trader_side)].slice(
        0,
        50,
      );
    } else if (p.kind === 'clobResync') open.value = p.openOrders;
  }

  /** Searches the catalogue (`q` empty: every market); `more` appends the next page. */
  async function search(q: string, more = false): Promise<void> {
    try {
      const next = more ? cursor.value : null;
      const r = await call('catalogue.markets', { ...(q ? { q } : {}), ...(next ? { cursor: next } : {}) });
      markets.value = more ? [...markets.value, ...r.markets] : r.markets;
      cursor.value = r.next_cursor;
    } catch (err) {
      error.value = messageOf(err);
    }
  }
  /** Reads the portfolio; `more` appends the next page of positions. */
  async function loadPortfolio(more = false): Promise<void> {
    const next = more ? posCursor.value : null;
    const r = await call('data.portfolio', { account: account.address, ...(next ? { cursor: next } : {}) });
    positions.value = more ? [...positions.value, ...r.positions] : r.positions;
    value.value = r.value;
    posCursor.value = r.next_cursor;
  }
  /** Reads the account's trades (needs API credentials). */
  async function loadTrades(): Promise<void> {
    if (!account.hasClobCredentials) return;
    trades.value = await call('clob.trades', { account: account.address });
  }
  /** Reads the account's open orders (needs API credentials). */
  async function loadOpen(): Promise<void> {
    if (!account.hasClobCredentials) return;
    const mark = recency.mark();
    const snapshot = (await call('clob.openOrders', { account: account.address })).data;
    open.value = recency.merge(snapshot, (o) => o.id, mark);
  }
  /** Shows `m` (first outcome), or the search list again with undefined. */
  function choose(m: Market | undefined): void {
    market.value = m;
    outcome.value = 0;
  }
  /** Reads the book of the chosen outcome and resolves to it (undefined without a market). */
  async function loadBook(): Promise<BookInfo | undefined> {
    const token = tokenId.value;
    if (!token) return undefined;
    void call('streams.watch', { clobToken: token }).catch(() => undefined); // the market channel follows this token
    const b = await call('clob.book', { tokenId: token });
    info.value = b;
    return b;
  }
  /**
   * Signs and posts one order for the chosen outcome; shows each answer and re-reads the account. A
   * market-style order without a typed price is limited to the best level ± `capBps` (basis points).
   */
  async function post(draft: ClobOrderDraft, capBps = DEFAULT_SLIPPAGE_BPS): Promise<void> {
    const token = tokenId.value;
    if (!token || busy.value) return;
    // A market-style order without a typed price goes at the best level ± the cap.
    const d = { ...draft, price: clobOrderPrice(info.value, draft, capBps) };
    if (!d.price) return;
    busy.value = true;
    error.value = undefined;
    results.value = [];
    try {
      const r = await call('clob.postOrders', {
        account: account.address,
        orders: [
          {
            tokenId: token,
            side: d.side,
            price: d.price,
            size: d.size,
            orderType: d.orderType,
            ...(d.postOnly ? { postOnly: d.postOnly } : {}),
            ...(d.orderType === 'GTD' ? { expiration: Math.floor(Date.now() / 1000) + Number(d.gtdHours) * 3600 } : {}),
          },
        ],
      });
      results.value = r.map(postResultText);
      await Promise.all([loadOpen(), loadPortfolio().catch(() => undefined), loadTrades().catch(() => undefined)]);
    } catch (err) {
      error.value = messageOf(err);
    } finally {
      busy.value = false;
    }
  }
  /** Cancels one open order, then re-reads the open orders. */
  async function cancel(orderId: string): Promise<void> {
    try {
      await call('clob.cancel', { account: account.address, orderIds: [orderId] });
      await loadOpen();
    } catch (err) {
      error.value = messageOf(err);
    }
  }
  /** Creates (or derives) the account's API credentials with the owner key. */
  async function createCredentials(): Promise<boolean> {
    try {
      await call('clob.createOrDerive', { account: account.address });
      return true;
    } catch (err) {
      error.value = messageOf(err);
      return false;
    }
  }
  /** Esc in the ticket: clears the answers and the error. */
  function dismiss(): void {
    results.value = [];
    error.value = undefined;
  }
  /** First reads when the tab opens; listens to the pushes until the returned stop. */
  function start(): () => void {
    const unlisten = listen(onPush);
    void search('');
    void loadOpen().catch(() => undefined);
    void loadPortfolio().catch(() => undefined);
    void loadTrades().catch(() => undefined);
    return unlisten;
  }

  return {
    markets,
    cursor,
    market,
    outcome,
    info,
    open,
    positions,
    value,
    posCursor,
    trades,
    error,
    results,
    busy,
    tokenId,
    search,
    loadPortfolio,
    loadTrades,
    loadOpen,
    choose,
    loadBook,
    post,
    cancel,
    createCredentials,
    dismiss,
    start,
  };
}
