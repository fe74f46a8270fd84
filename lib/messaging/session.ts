/**
 * Contract of the session procedures: a person's presence (re-arms the auto-lock timer)
 * and the panic switch ("Panic is total and bounded").
 */
import * as v from 'valibot';
import { done, noInput, POPUP, procedure } from './procedure';

/** One venue's panic outcome (`PanicStep` of lib/background/panic: the meaning of each variant is documented there). */
const panicStep = v.union([
  v.object({ ok: v.literal(true), detail: v.string() }),
  v.object({
    ok: v.literal(false),
    noAnswer: v.optional(v.literal(true)),
    error: v.string(),
    killSwitch: v.picklist(['auto-cancel', 'heartbeat lapse', 'none']),
    cancelWithinS: v.optional(v.number()),
    firesAt: v.optional(v.number()),
  }),
  v.object({ ok: v.literal(false), error: v.string() }),
  v.object({ skipped: v.string() }),
]);

/** One account's panic outcome (`PanicAccountReport`). */
const panicAccount = v.object({
  account: v.string(),
  label: v.string(),
  active: v.boolean(),
  perps: panicStep,
  clob: panicStep,
  positions: panicStep,
});

/**
 * The panic report (`PanicReport`): overall ok, a row per account, the active account's steps, grants revoked, requests
 * rejected, locked, problems in plain words.
 */
const panicReportSchema = v.object({
  ok: v.boolean(),
  accounts: v.array(panicAccount),
  perps: panicStep,
  clob: panicStep,
  positions: panicStep,
  grants: v.number(),
  pending: v.number(),
  locked: v.boolean(),
  problems: v.array(v.string()),
});

/** Session procedures. */
export const SESSION_CONTRACT = {
  /** A person is here: re-arms the auto-lock timer (nothing else). */
  'session.activity': procedure({ input: noInput, output: done, senders: POPUP, activity: true }),
  /** Cancels everything, optionally closes positions, revokes grants, rejects pending requests, locks. */
  'panic.run': procedure({
    input: v.strictObject({ closePositions: v.boolean() }),
    output: panicReportSchema,
    senders: POPUP,
    activity: true,
  }),
} as const;
