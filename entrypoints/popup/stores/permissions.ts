/**
 * Standing permissions and kill switches for the Settings tab: the live
 * grants with their last-24 h use, the dead-man timers' status, and Revoke.
 */
import { signal } from '@preact/signals';
import type { ProcedureOutput } from '../../../lib/messaging/protocol';
import { call as popupCall, messageOf } from '../api';
import type { Call } from './perps';

/** A live grant with its use over the last 24 h. */
export type GrantSummary = ProcedureOutput<'grant.list'>[number];
/** The kill switches' status. */
export type DeadManView = ProcedureOutput<'deadman.status'>;

/** The permissions store. */
export type PermissionsStore = ReturnType<typeof createPermissionsStore>;

/** Creates the store; `load()` reads the grants and the dead-man status. */
export function createPermissionsStore(call: Call = popupCall) {
  /** Undefined until the first read answers. */
  const grants = signal<GrantSummary[] | undefined>(undefined);
  const deadman = signal<DeadManView | undefined>(undefined);
  const error = signal<string | undefined>(undefined);

  /** Reads the dead-man status (silently) and the grants (a failure shows the error). */
  async function load(): Promise<void> {
    void call('deadman.status', {}).then(
      (d) => (deadman.value = d),
      () => undefined,
    );
    try {
      grants.value = await call('grant.list', {});
    } catch (e) {
      error.value = messageOf(e);
    }
  }
  /** Revokes grant `id`, then reads again. */
  async function revoke(id: string): Promise<void> {
    try {
      await call('grant.revoke', { id });
      await load();
    } catch (e) {
      error.value = messageOf(e);
    }
  }
  return { grants, deadman, error, load, revoke };
}
