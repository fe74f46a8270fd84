/**
 * The start hint's storage keys and the popup's early-read target (popup open), apart from
 * the hint's schema and from the reads themselves (`./early-reads.ts`), so that the popup's boot script
 * stays about a kilobyte and the popup's screens can name these keys without reaching the extension APIs.
 */
/** `storage.session` key of the popup's start hint (`StartHint`, `./start-hint.ts`). */
export const START_HINT_KEY = 'popup.startHint';

/**
 * `storage.session` key of the vault's session epoch: a random string the background renews on every session change.
 */
export const VAULT_EPOCH_KEY = 'vault.epoch';

/**
 * localStorage key of the instrument the ticket showed last (UI state, not a setting; the boot script reads it too).
 */
export const LAST_INSTRUMENT = 'countersign.lastInstrument';

/**
 * The boot script's `streams.watch`: the account and instrument it named, the reply as it came (unparsed), and when it
 * came (Unix ms).
 */
export type EarlyWatch = { account: string; iid: number; reply: Promise<{ reply: unknown; at: number }> };

/**
 * Property `key` of `x` when `x` is an object, else undefined (the boot script reads the stored hint without its
 * schema).
 */
const field = (x: unknown, key: string): unknown =>
  typeof x === 'object' && x !== null ? Reflect.get(x, key) : undefined;

/**
 * What the ticket will show first, guessed from the raw stored hint (`stored`, as `readHintKeys` reads
 * it) without its schema: the hint's active account when the hint is of the current epoch, says
 * unlocked and that account has a proxy key not expired at `now` (Unix ms), with `last`, the instrument
 * shown last, when it is a positive integer. Undefined otherwise. Only a guess to ask early: the popup
 * takes the answer only for the account and instrument its checked hint names.
 */
export function firstWatchTarget(
  stored: Record<string, unknown>,
  last: number,
  now: number,
): { account: string; iid: number } | undefined {
  const hint = stored[START_HINT_KEY];
  const epoch = stored[VAULT_EPOCH_KEY];
  const status = field(hint, 'status');
  if (typeof epoch !== 'string' || field(hint, 'epoch') !== epoch || field(status, 'unlocked') !== true)
    return undefined;
  const active = field(status, 'activeAccount');
  const accounts = field(status, 'accounts');
  const proxies = field(
    Array.isArray(accounts) ? accounts.find((a) => field(a, 'address') === active) : undefined,
    'proxies',
  );
  const live =
    Array.isArray(proxies) &&
    proxies.some((p) => {
      const expiry = field(p, 'expiry');
      return typeof expiry === 'number' && expiry > now;
    });
  return typeof active === 'string' && live && Number.isInteger(last) && last > 0
    ? { account: active, iid: last }
    : undefined;
}
