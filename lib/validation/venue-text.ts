/**
 * Words a gateway serves — instrument symbols, market questions, outcome labels, error and status
 * texts — are the venue's claim, validated here at the boundary (gateway → app) before any surface
 * shows them. Deny by default: a text passes only as printable ASCII (no control, bidi, zero-width or
 * look-alike characters: every non-ASCII character is refused, so a Cyrillic "а" cannot pose as "a"),
 * within a length, and in the venue's own shape where it has one (a perps symbol `BTC-PERP`, a perps
 * error code `insufficient_margin`). A refused text is not shown; the surface names the thing by the
 * id the signature commits to instead (`instrumentLabel`).
 *
 * Sources: seed 1 "Endpoints" (instrument symbols, `{ status: "err", error }` codes), seed 2 (the
 * exchange's `error` texts, outcome labels); PROTOCOL.md §3.2.
 */
import * as v from 'valibot';

/** Longest free venue text shown (characters): an error message, a question, an outcome label. */
const MAX_VENUE_TEXT = 200;
/** Longest exchange label (a market title, an outcome label) shown, characters. */
const MAX_LABEL = 120;

/** What stands in a message for an error text a gateway sent that breaks these rules (it is not shown). */
export const UNSHOWN_VENUE_TEXT = 'an error text this extension does not show';

/** Printable ASCII only (space to `~`): no control, format (bidi, zero-width), or non-ASCII look-alike character. */
const PRINTABLE_ASCII = /^[\x20-\x7E]*$/;
/**
 * A perps instrument symbol as the venue writes them: `BTC-PERP`, `1000PEPE-PERP` (upper-case letters, digits, dashes).
 */
const SYMBOL_RE = /^[A-Z0-9]{1,16}(?:-[A-Z0-9]{1,16}){0,2}$/;
/** A perps gateway error value (seed 1 "Errors"): a snake_case code such as `insufficient_margin`. */
const ERROR_CODE_RE = /^[a-z][a-z0-9_]{0,63}$/;

/**
 * A free venue text (`raw`) when it is safe to show: a string of printable ASCII of 1..`max`
 * characters (default `MAX_VENUE_TEXT`), surrounding spaces trimmed, matching `shape` when given;
 * `undefined` otherwise. Throws nothing.
 */
export function venueText(raw: unknown, o: { max?: number; shape?: RegExp } = {}): string | undefined {
  if (typeof raw !== 'string') return undefined;
  const t = raw.trim();
  if (t.length === 0 || t.length > (o.max ?? MAX_VENUE_TEXT) || !PRINTABLE_ASCII.test(t)) return undefined;
  if (o.shape && !o.shape.test(t)) return undefined;
  return t;
}

/** A perps instrument symbol in the venue's shape (`BTC-PERP`), else `undefined`. */
export const perpsSymbol = (raw: unknown): string | undefined => venueText(raw, { max: 40, shape: SYMBOL_RE });

/** A perps gateway error code in the venue's shape (`insufficient_margin`), else `undefined`. */
export const perpsErrorCode = (raw: unknown): string | undefined => venueText(raw, { max: 64, shape: ERROR_CODE_RE });

/**
 * How every surface names a perps instrument: the venue's symbol beside the id the signature commits
 * to (`BTC-PERP (#1)`), or the id alone (`instrument #1`) when the symbol is unknown or refused. A label
 * of the same id (`BTC-PERP (#1)` for 1) is the label again; one of another id is refused like any text.
 */
export function instrumentLabel(iid: number, symbol: unknown): string {
  const own = ` (#${iid})`;
  const s = perpsSymbol(typeof symbol === 'string' && symbol.endsWith(own) ? symbol.slice(0, -own.length) : symbol);
  return s ? `${s} (#${iid})` : `instrument #${iid}`;
}

/**
 * The instrument symbols of an `instruments` answer that may be shown, by id: each in the venue's shape,
 * and no symbol two instruments share (both are refused: the name would not tell them apart).
 */
export function instrumentSymbols(list: readonly { instrument_id: number; symbol?: unknown }[]): Map<number, string> {
  const count = new Map<string, number>();
  for (const i of list) {
    const s = perpsSymbol(i.symbol);
    if (s) count.set(s, (count.get(s) ?? 0) + 1);
  }
  const out = new Map<number, string>();
  for (const i of list) {
    const s = perpsSymbol(i.symbol);
    if (s && count.get(s) === 1) out.set(i.instrument_id, s);
  }
  return out;
}

/** A venue's step as a positive decimal string (`"0.01"`, `"1"`), or undefined for anything else. */
function stepText(raw: unknown): string | undefined {
  return typeof raw === 'string' && /^\d{1,20}(?:\.\d{1,20})?$/.test(raw) && /[1-9]/.test(raw) ? raw : undefined;
}

/** `10^-decimals` as a decimal string for 0-18 decimals (`2` → `"0.01"`), else undefined. */
function stepOfDecimals(raw: unknown): string | undefined {
  if (typeof raw !== 'number' || !Number.isInteger(raw) || raw < 0 || raw > 18) return undefined;
  return raw > 0 ? `0.${'0'.repeat(raw - 1)}1` : '1';
}

/**
 * Each instrument's tick and lot from the venue's `instruments` read, validated: `tick_size` / `lot_size` (the
 * sandbox's extras) when they are positive decimal strings, else `10^-price_decimals` / `10^-quantity_decimals`
 * (the seed's fields), as the order summary reads them (`lib/perps/summary.ts`); a step that is neither is left out
 * (the words then show the number as signed, unpadded).
 */
export function instrumentSteps(
  list: readonly { instrument_id: number; [k: string]: unknown }[],
): Map<number, { tick?: string; lot?: string }> {
  const out = new Map<number, { tick?: string; lot?: string }>();
  for (const i of list) {
    const tick = stepText(i.tick_size) ?? stepOfDecimals(i.price_decimals);
    const lot = stepText(i.lot_size) ?? stepOfDecimals(i.quantity_decimals);
    out.set(i.instrument_id, { ...(tick ? { tick } : {}), ...(lot ? { lot } : {}) });
  }
  return out;
}

/** A token id as words name it: its first 6 and last 4 digits (`123456…7890`); a short id whole. */
export const shortToken = (tokenId: string): string =>
  tokenId.length > 12 ? `${tokenId.slice(0, 6)}…${tokenId.slice(-4)}` : tokenId;

/**
 * A label field an exchange answers (a market title, an outcome label): a string of at most 300 characters, shown only
 * through `venueLabelOr`.
 */
export const venueLabelString = v.pipe(v.string(), v.maxLength(300));

/**
 * An exchange label (market title, outcome label) as it is shown: the venue's text when it passes the
 * venue-text rules (printable ASCII, at most 120 characters), else `fallback` — the thing named by the
 * token the order or position commits to (`market of token 123456…7890`), never a blank.
 */
export function venueLabelOr(raw: unknown, fallback: string): string {
  return venueText(raw, { max: MAX_LABEL }) ?? fallback;
}
