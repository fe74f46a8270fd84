/**
 * The venues' kill switches the dead-man keeps armed (./deadman.ts): the venues that have one, and each
 * switch's lead, renewal period and liveness window (see "Timers and leads" there), also stated in the
 * dead-man's audit entries (./deadman-audit.ts).
 */

/** A venue with a kill switch. */
export type DeadManVenue = 'perps' | 'clob';

/** How far ahead the perps auto-cancel is set (ms). Longer than the 30 s backstop alarm plus a renewal period. */
export const PERPS_LEAD_MS = 60_000;
/** How often the perps auto-cancel is renewed while the background is awake (ms). */
export const PERPS_RENEW_MS = 10_000;
/** The perps switch counts as armed while its cancel time is at least this far ahead (ms). */
export const PERPS_ARMED_MIN_MS = 30_000;
/** How often an order-book heartbeat is sent (ms). */
export const HEARTBEAT_MS = 4_000;
/** After this long without a heartbeat the exchange cancels the account's orders (ms; the venue's value). */
export const HEARTBEAT_LAPSE_MS = 10_000;
/** The order-book switch counts as armed while the last heartbeat is at most this old (ms): 4 s before the lapse. */
export const HEARTBEAT_ARMED_WITHIN_MS = 6_000;
/** Longest a granted request waits for a renewal in flight (e.g. the first one after a restart) before it asks (ms). */
export const ARM_WAIT_MS = 5_000;
