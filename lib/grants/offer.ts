/**
 * What the approval window offers when a person allows a site within limits: the venue,
 * the request's instruments / markets by name, the account's equity and the caps proposed from it.
 *
 * Proposal (the person can only lower the caps in the window; with no equity read nothing is
 * proposed and the person types them):
 * - per-order notional cap: `PROPOSED_ORDER_PCT` (10 %) of equity;
 * - rolling-24 h notional cap: `PROPOSED_DAILY_PCT` (100 %) of equity;
 * - price band `DEFAULT_PRICE_BAND_PCT` (2 %); perps slippage allowance `DEFAULT_SLIPPAGE_PCT` (1 %).
 * Equity: perps, the portfolio's `margin.total_account_value`; order book, the collateral (USDC)
 * balance (`GET /balance-allowance?asset_type=COLLATERAL`). Amounts are USDC decimal strings, floored
 * to cents.
 */
import * as v from 'valibot';
import { fromUnits, toUnits } from '../decimal';
import { requestJson } from '../http/json';
import { DEFAULT_PRICE_BAND_PCT, DEFAULT_SLIPPAGE_PCT, type GrantVenue } from './evaluate';
import { instrumentLabel, venueText } from '../validation/venue-text';

/** Share of equity proposed as the per-order notional cap (percent). */
export const PROPOSED_ORDER_PCT = 10n;
/** Share of equity proposed as the rolling-24 h notional cap (percent). */
export const PROPOSED_DAILY_PCT = 100n;

/** The offer the window shows: venue, named scope, equity (USDC, or null when unknown) and proposed limits. */
export type GrantOffer = {
  venue: GrantVenue;
  markets: { id: string; name: string }[];
  equity: string | null;
  proposal: { maxNotional?: string; dailyNotional?: string; priceBandPct: string; slippagePct?: string };
};

/**
 * Caps proposed from `equity` (USDC decimal string): 10 % per order, 100 % per 24 h, floored to cents; none when equity
 * ≤ 0 or unknown.
 */
export function proposeCaps(equity: string | null | undefined): { maxNotional?: string; dailyNotional?: string } {
  const cents =
    equity && /^\d{1,30}(\.\d+)?$/.test(equity) ? toUnits(equity.replace(/(\.\d{2})\d+$/, '$1'), 2) : undefined;
  if (!cents || cents <= 0n) return {};
  const order = (cents * PROPOSED_ORDER_PCT) / 100n;
  const daily = (cents * PROPOSED_DAILY_PCT) / 100n;
  return order > 0n ? { maxNotional: fromUnits(order, 2), dailyNotional: fromUnits(daily, 2) } : {};
}

/** Reads an offer needs (injected: the background passes the signing service's reads). Each may throw. */
export type OfferReads = {
  /** Equity of `account` on `venue`, USDC decimal string (undefined when unknown). */
  equity: (venue: GrantVenue, account: string) => Promise<string | undefined>;
  /** Display names of instruments / markets (id → name); missing ids fall back to the id. */
  names: (venue: GrantVenue, ids: string[]) => Promise<Record<string, string>>;
};

/**
 * Builds the offer for a pending request on `venue` naming `markets`, for `account`. Reads that fail leave the field
 * unknown.
 */
export async function grantOffer(
  venue: GrantVenue,
  markets: string[],
  account: string,
  reads: OfferReads,
): Promise<GrantOffer> {
  const [equity, names] = await Promise.all([
    reads.equity(venue, account).catch(() => undefined),
    reads.names(venue, markets).catch((): Record<string, string> => ({})),
  ]);
  return {
    venue,
    markets: markets.map((id) => ({
      id,
      name: names[id] ?? (venue === 'perps' ? `instrument #${id}` : `market ${id.slice(0, 6)}…${id.slice(-4)}`),
    })),
    equity: equity ?? null,
    proposal: {
      ...proposeCaps(equity),
      priceBandPct: DEFAULT_PRICE_BAND_PCT,
      ...(venue === 'perps' ? { slippagePct: DEFAULT_SLIPPAGE_PCT } : {}),
    },
  };
}

const DEC = /^\d{1,30}(\.\d{1,30})?$/;

// The fields an offer reads from the gateways' answers (others are ignored; a read of another shape is unknown).
const portfolioEquity = v.looseObject({
  margin: v.optional(v.looseObject({ total_account_value: v.optional(v.unknown()) })),
});
const instrumentNames = v.array(
  v.looseObject({ instrument_id: v.optional(v.unknown()), symbol: v.optional(v.unknown()) }),
);
const marketByToken = v.looseObject({ condition_id: v.optional(v.unknown()) });
const marketInfo = v.looseObject({
  question: v.optional(v.unknown()),
  tokens: v.optional(v.array(v.looseObject({ token_id: v.optional(v.unknown()), outcome: v.optional(v.unknown()) }))),
});

/**
 * The reads of an offer from the signing service and the order-book URL: perps portfolio and
 * instruments; order-book collateral, `GET /markets-by-token/{id}` then `GET /markets/{condition}` for
 * "question — outcome".
 */
export function serviceOfferReads(d: {
  perpsRead: (account: string | undefined, name: 'portfolio' | 'instruments') => Promise<unknown>;
  clobCollateral: (account: string) => Promise<string | undefined>;
  clobUrl: () => Promise<string>;
  /** The gateway transport (the signing service's: the transport rule and a deadline on every request). */
  fetchFn: typeof fetch;
}): OfferReads {
  return {
    equity: async (venue, account) => {
      if (venue === 'clob') return d.clobCollateral(account);
      const p = v.safeParse(portfolioEquity, await d.perpsRead(account, 'portfolio'));
      const value = p.success ? p.output.margin?.total_account_value : undefined;
      return typeof value === 'string' && DEC.test(value) ? value : undefined;
    },
    names: async (venue, ids) => {
      if (venue === 'perps') {
        const list = v.parse(instrumentNames, await d.perpsRead(undefined, 'instruments'));
        return Object.fromEntries(
          list.flatMap((i) =>
            ids.includes(String(i.instrument_id))
              ? [[String(i.instrument_id), instrumentLabel(Number(i.instrument_id), i.symbol)]]
              : [],
          ),
        );
      }
      const base = await d.clobUrl();
      const out: Record<string, string> = {};
      for (const id of ids.slice(0, 15)) {
        try {
          const m = await requestJson(`${base}/markets-by-token/${id}`, { method: 'GET' }, d.fetchFn);
          const market = v.safeParse(marketByToken, m.body);
          const cond = market.success ? market.output.condition_id : undefined;
          if (m.status !== 200 || typeof cond !== 'string' || !/^0x[0-9a-fA-F]{64}$/.test(cond)) continue;
          const info = await requestJson(`${base}/markets/${cond}`, { method: 'GET' }, d.fetchFn);
          const parsed = v.safeParse(marketInfo, info.body);
          const b = parsed.success ? parsed.output : undefined;
          const outcome = b?.tokens?.find((t) => String(t.token_id) === id)?.outcome;
          // The exchange's words, validated (venue-text), beside the token id the orders commit to.
          const question = venueText(b?.question, { max: 120 });
          const label = venueText(outcome, { max: 40 });
          if (info.status === 200 && question)
            out[id] = `${question}${label ? ` — ${label}` : ''} (token ${id.slice(0, 6)}…${id.slice(-4)})`;
        } catch {
          /* unnamed: the short id */
        }
      }
      return out;
    },
  };
}
