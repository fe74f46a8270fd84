/**
 * The popup's start hint (popup open → ticket interactive): so that an open popup can show
 * the ticket before its first `vault.status` round trip, it keeps in `browser.storage.session` the last
 * status it read while the vault was unlocked — nothing secret (addresses, labels, proxy expiries,
 * counts; the same object `vault.status` answers), in an area only extension pages and the background
 * can read (`setAccessLevel('TRUSTED_CONTEXTS')`, `lib/background/compose.ts`).
 *
 * A hint is good only for the unlock it was written in: the background writes a new random
 * `VAULT_EPOCH_KEY` and removes the hint every time the vault's session state is set or cleared
 * (unlock, trading session, lock, a failed restore), and the popup stores with its hint the epoch it
 * read *before* asking for the status it stores. A hint whose epoch is not the current one is ignored,
 * so a vault locked since never shows a ticket. The popup still replaces the hint with the real status
 * as soon as it arrives (tens of ms); everything a ticket can do goes through the background anyway.
 */
import * as v from 'valibot';
import { VAULT_CONTRACT } from './vault';
import { START_HINT_KEY, VAULT_EPOCH_KEY } from './start-hint-keys';

export { START_HINT_KEY, VAULT_EPOCH_KEY };

/** The stored hint: the epoch read before the status was asked, and that status (`vault.status`'s output). */
const startHintSchema = v.object({
  epoch: v.pipe(v.string(), v.minLength(8)),
  status: VAULT_CONTRACT['vault.status'].output,
});

/** A start hint (see the module docstring). */
export type StartHint = v.InferOutput<typeof startHintSchema>;

/**
 * The status a popup may show at once, from what `storage.session` holds under `START_HINT_KEY` and
 * `VAULT_EPOCH_KEY`: the hint's status when it parses, was written in the current epoch and says
 * unlocked; otherwise undefined.
 */
export function usableHint(stored: Record<string, unknown>): StartHint['status'] | undefined {
  const hint = v.safeParse(startHintSchema, stored[START_HINT_KEY]);
  const epoch = stored[VAULT_EPOCH_KEY];
  if (!hint.success || typeof epoch !== 'string' || hint.output.epoch !== epoch) return undefined;
  const { status } = hint.output;
  return status.unlocked && status.state === 'unlocked' ? status : undefined;
}
