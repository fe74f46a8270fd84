/**
 * The building block of the message contract: one procedure is an input schema (what the
 * caller sends), an output schema (what the handler answers), the sender kinds allowed to call it, and
 * whether a call is a person's activity (only those re-arm the auto-lock timer). The
 * domain modules beside this file (`vault.ts`, `perps.ts` …) declare their procedures with
 * `procedure()`; `protocol.ts` aggregates them into `PROCEDURES`.
 */
import * as v from 'valibot';

/** Who sent a message, from the browser's `sender` (never from a field in the message). */
export type SenderKind = 'popup' | 'approval' | 'content';

/**
 * One procedure: `input` validates the payload (its output is what the handler receives), `output`
 * describes the handler's answer (checked by the router in tests and development builds), `senders`
 * lists who may call it, `activity` marks a person's action.
 */
export type Procedure<I extends v.GenericSchema = v.GenericSchema, O extends v.GenericSchema = v.GenericSchema> = {
  readonly input: I;
  readonly output: O;
  readonly senders: readonly SenderKind[];
  readonly activity: boolean;
};

/** Declares a procedure, keeping its schemas' exact types (so inputs and outputs are inferred from them). */
export function procedure<I extends v.GenericSchema, O extends v.GenericSchema>(p: Procedure<I, O>): Procedure<I, O> {
  return p;
}

/** Extension pages: the popup and the approval window. */
export const EXT: readonly SenderKind[] = ['popup', 'approval'];
/** The popup only. */
export const POPUP: readonly SenderKind[] = ['popup'];
/** The approval window only. */
export const APPROVAL: readonly SenderKind[] = ['approval'];

/** No payload: `{}`. */
export const noInput = v.strictObject({});
/** No answer: the handler resolves `null` (commands that only succeed or throw). */
export const done = v.null();

/** A password as typed: 1-1024 characters. */
export const password = v.pipe(
  v.string('must be a string'),
  v.minLength(1, 'is required'),
  v.maxLength(1024, 'is too long'),
);
/** A secp256k1 private key: `0x` + 64 hex characters (typed as viem's `Hex`). */
export const privateKey = v.pipe(
  v.string('must be a string'),
  v.regex(/^0x[0-9a-fA-F]{64}$/, 'must be 0x followed by 64 hex characters'),
  v.transform((s): `0x${string}` => `0x${s.slice(2)}`),
);
/** An optional label of at most 64 characters. */
export const label = v.optional(v.pipe(v.string(), v.maxLength(64, 'must be at most 64 characters')));
/** A request or grant id of at most 64 characters. */
export const shortId = v.pipe(v.string(), v.maxLength(64));
/** A pagination cursor of at most 200 characters. */
export const cursor = v.pipe(v.string(), v.maxLength(200));
/** An opaque gateway body the background passes on unchanged (already classified by the gateway client). */
export const gatewayBody = v.unknown();
