/**
 * Perps ticket: instrument with mark / index / mid and 24 h change, a 6-level book
 * ladder (click a level to take its price), side, size (contracts or USDC; presets 25/50/75/100 % of
 * what the free margin allows), price (prefilled from the book; empty = market-style IOC), time in
 * force, post-only, reduce-only, leverage; before submit the risk panel shows the position, available
 * margin, notional, margin required, estimated fee and liquidation price (lib/perps/risk over the
 * venue's reads) with warnings when the order flips the position or grows it past the setting.
 *
 * Keyboard: outside text fields B / S pick the side and 1-4 the size presets; ↑ / ↓ move the price by
 * one tick (in the price field too); Enter submits; Esc clears and returns to the ticket.
 * After the acknowledgement it polls the venue's orders read until the order rests, fills or is
 * rejected. "Close position" sends a reduce-only market order for the whole position.
 *
 * Layout (360 × 600 px): instrument and side, the ticker line, then two columns — size,
 * presets, price and order options on the left, the book ladder (6 levels a side, no Tab stops) on the
 * right — then the risk summary and the submit button in a foot that sticks to the bottom of the
 * view, so both are visible without scrolling; leverage and open orders follow below. `I` / `Shift+I`
 * (outside text fields) cycle the instrument.
 *
 * The state lives in `stores/ticket.ts` over the perps store; this screen lays out the presentational
 * parts in `components/perps/`.
 */
import type { RefObject } from 'preact';
import { useEffect, useLayoutEffect, useMemo, useRef } from 'preact/hooks';
import { Field, Notice } from '../../components/ui';
import { BookLadder } from '../../components/BookLadder';
import { ClosePreview, RiskPanel } from '../../components/RiskPanel';
import { TpSlInputs } from '../../components/perps/TpSlInputs';
import { SideToggle } from '../../components/SideToggle';
import { TickerLine } from '../../components/perps/TickerLine';
import { SizePriceInputs } from '../../components/perps/SizePriceInputs';
import { OrderFlags } from '../../components/perps/OrderFlags';
import { LeverageForm } from '../../components/perps/LeverageForm';
import { OpenOrders } from '../../components/perps/OpenOrders';
import { TicketFooter, TicketMeta } from '../../components/perps/TicketFooter';
import type { PerpsCommand } from '../../lib/perps/commands';
import { fillSummary, formatStep } from '../../lib/format';
import { call, inSidePanel, openSidePanel, type Account } from './api';
import { labelOf, lotOf, tickOf, type PerpsStore } from './stores/perps';
import { createPerpsTicket, PRESETS, ticketKey, type PerpsTicketState } from './stores/ticket';
import { DEFAULT_SLIPPAGE_BPS } from '../../lib/perps/risk';

/** Signs and sends a perps command from the popup (the click is the consent); resolves to the venue's answer. */
export const sendPerps = (account: Account, cmd: PerpsCommand) =>
  call('perps.send', { account: account.address, op: cmd.body, ...(cmd.label ? { label: cmd.label } : {}) });

/** Places an order (a `createOrders` command) and resolves to the venue's acknowledgements. */
const placePerps = async (account: Account, cmd: PerpsCommand) => {
  const answer = await call('perps.send', {
    account: account.address,
    op: cmd.body,
    ...(cmd.label ? { label: cmd.label } : {}),
  });
  return Array.isArray(answer) ? answer.flatMap((a) => (a.oid === undefined ? [] : [{ oid: a.oid }])) : [];
};

/**
 * Adds the average fill price and the fee to the result notice of order `oid` once it (partly) filled,
 * from the venue's fills read; the notice stays as it was when the read fails.
 */
async function withFillSummary(t: PerpsTicketState, store: PerpsStore, oid: number): Promise<void> {
  const shown = t.result.value;
  if (!shown || !/filled/i.test(shown) || /no liquidity/.test(shown)) return;
  const fills = await store.read('fills', {}).catch(() => undefined);
  const summary = fills ? fillSummary(fills.data, oid, t.tick.value) : undefined;
  if (summary && t.result.value === shown) t.result.value = `${shown} · avg ${summary.avgPrice} · fee ${summary.fee}`;
}

/** The Perps tab: the order ticket for `account` over the shared perps store (needs a live proxy key). */
export function PerpsTicket({
  account,
  store,
  maxPositionUsdc,
  slippageBps = DEFAULT_SLIPPAGE_BPS,
}: {
  account: Account;
  store: PerpsStore;
  maxPositionUsdc: number;
  slippageBps?: number;
}) {
  const hasProxy = account.proxies.some((p) => p.expiry > Date.now());
  const limit = useRef(maxPositionUsdc);
  limit.current = maxPositionUsdc;
  const cap = useRef(slippageBps);
  cap.current = slippageBps;
  const placed = useRef<number>();
  const t = useMemo(
    () =>
      createPerpsTicket({
        store,
        send: (cmd) => sendPerps(account, cmd),
        place: async (cmd) => {
          const acks = await placePerps(account, cmd);
          placed.current = acks[0]?.oid;
          return acks;
        },
        maxPositionUsdc: () => limit.current,
        slippageBps: () => cap.current,
      }),
    [store, account.address],
  );
  const qtyRef = useRef<HTMLInputElement>(null);
  const formRef = useRef<HTMLFormElement>(null);
  const iid = store.iid.value;

  // Focus the size field as soon as it is in the DOM (a layout effect: before the first paint).
  useLayoutEffect(() => qtyRef.current?.focus(), []);
  useEffect(() => {
    if (iid === undefined || !hasProxy) return;
    // The last order's notice belongs to the instrument it was placed on.
    t.result.value = undefined;
    t.error.value = undefined;
    t.instrumentChanged();
    void t.loadConfig().catch(() => undefined);
  }, [iid, t]); // a new ticket (its store made again for the same account and instrument) loads its config too

  if (!hasProxy) {
    return (
      <section class="panel">
        <Notice>Issue a proxy key (Account → Keys) to trade perps from here.</Notice>
      </section>
    );
  }
  const submit = async (e?: Event) => {
    e?.preventDefault();
    placed.current = undefined;
    await t.submit();
    qtyRef.current?.focus();
    if (placed.current !== undefined) await withFillSummary(t, store, placed.current);
  };
  const onKey = (e: KeyboardEvent) => {
    const target = e.target;
    const typing =
      target instanceof HTMLInputElement ||
      target instanceof HTMLSelectElement ||
      target instanceof HTMLTextAreaElement;
    const next = cycleKey(e, typing);
    if (next) {
      e.preventDefault();
      const list = store.instruments.value;
      const i = list.findIndex((x) => x.instrument_id === store.iid.value);
      const to = list[(i + next + list.length) % list.length];
      if (to) store.select(to.instrument_id);
      return;
    }
    const action = ticketKey(e, typing, target instanceof HTMLInputElement && target.name === 'price');
    if (!action) return;
    e.preventDefault();
    if (action.kind === 'clear') {
      t.clear();
      formRef.current?.focus();
    } else if (action.kind === 'step') t.step(action.steps);
    else if (action.kind === 'submit')
      void (t.closeArmed.value ? t.closePosition() : submit()); // inside a field the form submits by itself
    else if (action.kind === 'side') t.buy.value = action.buy;
    else t.preset(action.fraction);
  };
  // The parts a book or account push changes (the price prefill, the size hint, the flags, the ladder,
  // the risk panel, an armed close's preview, the foot, the open orders) each read their own signals,
  // so a push re-renders them, not the whole ticket; what a push never changes (TP / SL, the leverage
  // form) is read here.
  return (
    <section class="panel ticket" aria-label="Perps order ticket">
      <Prefill t={t} />
      <form
        ref={formRef}
        tabIndex={-1}
        onSubmit={(e) => void submit(e)}
        onKeyDown={onKey}
        aria-keyshortcuts="B S I 1 2 3 4 ArrowUp ArrowDown Enter Escape"
      >
        <TicketHead t={t} store={store} />
        <div class="ticket-grid">
          <div class="ticket-main">
            <TicketSizePrice t={t} qtyRef={qtyRef} />
            <TicketFlags t={t} />
          </div>
          <TicketLadder t={t} store={store} />
        </div>
        <TpSlInputs
          tp={t.tp.value}
          sl={t.sl.value}
          slippage={t.slippage.value}
          defaultCapBps={slippageBps}
          onTp={(v) => (t.tp.value = v)}
          onSl={(v) => (t.sl.value = v)}
          onSlippage={(v) => (t.slippage.value = v)}
        />
        <div class="ticket-foot" data-testid="ticket-foot">
          <TicketRisk t={t} store={store} />
          <TicketClosePreview t={t} />
          <TicketFoot t={t} store={store} />
        </div>
        <TicketMetaLine t={t} store={store} />
      </form>
      <LeverageForm
        lev={t.lev.value}
        cross={t.cross.value}
        onLev={(v) => (t.lev.value = v)}
        onCross={(v) => (t.cross.value = v)}
        onApply={() => void t.applyLeverage()}
      />
      <TicketOpenOrders t={t} store={store} />
      {inSidePanel() ? null : (
        <button
          type="button"
          class="link small"
          onClick={() =>
            void openSidePanel()
              .then((ok) => ok && window.close())
              .catch(() => undefined)
          }
        >
          Keep the cockpit open in the side panel
        </button>
      )}
    </section>
  );
}

/** Prefills the price from the book (best ask to buy, best bid to sell) until the person types one; renders nothing. */
function Prefill({ t }: { t: PerpsTicketState }) {
  const best = t.best.value;
  const buy = t.buy.value;
  useEffect(() => t.prefill(), [best, buy]);
  return null;
}

/** Size, presets and price. */
function TicketSizePrice({ t, qtyRef }: { t: PerpsTicketState; qtyRef: RefObject<HTMLInputElement> }) {
  return (
    <SizePriceInputs
      qty={t.qty.value}
      max={maxText(t.maxSize.value, t.lot.value, baseOf(t.label.value))}
      unit={t.unit.value}
      contracts={t.contracts.value}
      price={t.price.value}
      tick={t.tick.value}
      presets={PRESETS}
      qtyRef={qtyRef}
      onQty={(q) => (t.qty.value = q)}
      onPrice={t.setPrice}
      onPreset={t.preset}
      onToggleUnit={t.toggleUnit}
    />
  );
}

/** Time in force, post-only, reduce-only. */
function TicketFlags({ t }: { t: PerpsTicketState }) {
  return (
    <OrderFlags
      tif={t.effectiveTif.value}
      marketStyle={t.price.value === ''}
      po={t.po.value}
      ro={t.ro.value}
      onTif={(v) => (t.tif.value = v)}
      onPo={(v) => (t.po.value = v)}
      onRo={(v) => (t.ro.value = v)}
    />
  );
}

/** The book ladder, or its placeholder until the first book. */
function TicketLadder({ t, store }: { t: PerpsTicketState; store: PerpsStore }) {
  const book = store.book.value;
  return book ? (
    <BookLadder
      bids={book.bids}
      asks={book.asks}
      tick={t.tick.value}
      lot={t.lot.value}
      unit={baseOf(t.label.value)}
      onPick={t.setPrice}
      stale={store.bookStale.value}
    />
  ) : (
    <p class="ladder muted small">Loading the book…</p>
  );
}

/** Why the order cannot go, the error, Buy / Sell and Close position, the venue's answer. */
function TicketFoot({ t, store }: { t: PerpsTicketState; store: PerpsStore }) {
  return (
    <TicketFooter
      coid={t.coid.value}
      weights={t.built.value.cmd?.weight}
      spend={store.spend.value}
      problem={t.qty.value ? t.reason.value : t.built.value.problem}
      error={t.error.value}
      result={t.result.value}
      buy={t.buy.value}
      contracts={t.contracts.value}
      symbol={t.label.value}
      price={t.price.value}
      tick={t.instrument.value ? t.tick.value : undefined}
      lot={t.instrument.value ? t.lot.value : undefined}
      canSubmit={t.canSubmit.value}
      hasPosition={!!t.position.value}
      onClosePosition={() => void t.closePosition()}
    />
  );
}

/** The close-position preview while a close is armed (it follows the book and the position). */
function TicketClosePreview({ t }: { t: PerpsTicketState }) {
  const preview = t.closeArmed.value ? t.closePreview.value : undefined;
  return preview ? (
    <ClosePreview
      symbol={t.label.value}
      tick={t.tick.value}
      lot={t.lot.value}
      preview={preview}
      onConfirm={() => void t.closePosition()}
      onCancel={t.cancelClose}
    />
  ) : null;
}

/** The client order id, weights and reads line. */
function TicketMetaLine({ t, store }: { t: PerpsTicketState; store: PerpsStore }) {
  return <TicketMeta coid={t.coid.value} weights={t.built.value.cmd?.weight} spend={store.spend.value} />;
}

/** The account's open orders, with cancel by id, by client order id and all. */
function TicketOpenOrders({ t, store }: { t: PerpsTicketState; store: PerpsStore }) {
  const instruments = store.instruments.value;
  return (
    <OpenOrders
      orders={store.openOrders.value}
      label={(id) => labelOf(instruments, id)}
      steps={(id) => {
        const i = instruments.find((x) => x.instrument_id === id);
        return i ? { tick: tickOf(i), lot: lotOf(i) } : { tick: '0.01', lot: '0.001' };
      }}
      onCancel={(oid) => void t.cancel(oid)}
      onCancelByCoid={(c) => void t.cancelByCoid(c)}
      onCancelAll={() => void t.cancelEverything()}
    />
  );
}

/** The max-size readout: "Max 9.755 SOL" (contracts formatted to the lot), or undefined until the size is known. */
const maxText = (size: string | undefined, lot: string, asset: string) =>
  size === undefined ? undefined : `Max ${formatStep(size, lot)} ${asset}`.trim();

/** The base asset of a perps symbol ("BTC-PERP" → "BTC"), naming the ladder's size column. */
const baseOf = (symbol: string) => symbol.split('-')[0] ?? '';

/** `I` (+1) / `Shift+I` (−1) outside text fields and without Ctrl / Meta / Alt cycle the instrument; else 0. */
function cycleKey(
  e: { key: string; ctrlKey: boolean; metaKey: boolean; altKey: boolean; shiftKey: boolean },
  typing: boolean,
): -1 | 0 | 1 {
  if (typing || e.ctrlKey || e.metaKey || e.altKey || e.key.toLowerCase() !== 'i') return 0;
  return e.shiftKey ? -1 : 1;
}

/** Instrument select, side and the ticker line. */
function TicketHead({ t, store }: { t: PerpsTicketState; store: PerpsStore }) {
  const ticker = t.ticker.value;
  return (
    <>
      <div class="grid2">
        <Field label="Instrument (I)">
          <select
            name="instrument"
            aria-keyshortcuts="I"
            value={store.iid.value}
            onChange={(e) => store.select(Number(e.currentTarget.value))}
          >
            {store.instruments.value.map((i) => (
              <option value={i.instrument_id} key={i.instrument_id}>
                {labelOf(store.instruments.value, i.instrument_id)}
              </option>
            ))}
          </select>
        </Field>
        <SideToggle buy={t.buy.value} onChange={(b) => (t.buy.value = b)} label="Side (B / S)" />
      </div>
      {ticker ? <TickerLine ticker={ticker} change={t.change.value} tick={t.tick.value} /> : null}
    </>
  );
}

/** The risk panel over the ticket's preview. */
function TicketRisk({ t, store }: { t: PerpsTicketState; store: PerpsStore }) {
  const position = t.position.value;
  const preview = t.preview.value;
  return (
    <RiskPanel
      symbol={t.label.value}
      tick={t.tick.value}
      lot={t.lot.value}
      {...(position
        ? {
            position: {
              size: position.size,
              entryPrice: position.entry_price,
              unrealizedPnl: position.unrealized_pnl,
              liquidationPrice: position.liquidation_price,
            },
          }
        : {})}
      available={store.portfolio.value?.withdrawable ?? '…'}
      {...(preview ? { preview } : {})}
      leverage={t.leverage.value}
      pendingLeverage={t.pendingLeverage.value}
      cross={t.venueCross.value}
      market={t.market.value}
      slippageCapBps={t.cap.value}
      tpsl={{ tp: t.tp.value, sl: t.sl.value }}
      warnings={t.warnings.value}
    />
  );
}
