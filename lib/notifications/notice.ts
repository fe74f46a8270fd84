/**
 * A notification as the rules raise it (`Notice`), how it reads inside a burst (`NoticeBurst`), and the one maker of
 * notices whose ids stay unique.
 */
import { signedDecimal } from '../format/order-words';
import { isVenueDecimal } from '../validation';

/**
 * How a notice reads inside a burst (`createNoticeBursts`): notices of one `key` (a kind of event of one
 * account) gathered in one window read as one summary — title `<count> <many>`, message the first
 * `line`s, "and N more", then `note` (what they share, when anything).
 */
export type NoticeBurst = { key: string; many: string; line: string; note?: string };

/**
 * A notification to raise: `id` unique per notification, `kind` its rule, `title` and `message` plain
 * text; `burst` when a burst of its kind reads as one summary (fills and cancels).
 */
export type Notice = {
  id: string;
  kind: 'fill' | 'cancel' | 'liquidation' | 'stream' | 'unrecorded';
  title: string;
  message: string;
  burst?: NoticeBurst;
};

/** Lines a summary (or one trade's own orders) lists before "and N more". */
export const BURST_LINES = 3;

/** Makes a notice of `kind`: its `id` unique per notice (`key` names the event), `burst` when it may join one. */
export type NoticeMaker = (
  kind: Notice['kind'],
  key: string,
  title: string,
  message: string,
  burst?: NoticeBurst,
) => Notice;

/** A `NoticeMaker` with its own sequence: ids `countersign-<kind>-<key>-<n>`. */
export function noticeMaker(): NoticeMaker {
  let seq = 0;
  return (kind, key, title, message, burst) => ({
    id: `countersign-${kind}-${key}-${++seq}`,
    kind,
    title,
    message,
    ...(burst ? { burst } : {}),
  });
}

/**
 * A number the venue reports (a venue decimal string, `isVenueDecimal`) as it is, grouped; `?` for anything that is not
 * one.
 */
export function decimalOr(x: unknown): string {
  return isVenueDecimal(x) ? signedDecimal(x).text : '?';
}
