/**
 * Extension-page side of the message contract (popup, approval window): `call(type, payload)` sends one
 * message through `runtime.sendMessage` and returns the result — typed by the procedure's output schema
 * (`ProcedureOutput<N>`) — or throws a `RemoteError` carrying the background's `{ name, shortMessage, code? }`.
 */
import * as v from 'valibot';
import type { ProcedureCallInput, ProcedureName, ProcedureOutput } from './protocol';
import type { WireError } from '../errors/base';

/** An error reported by the background. */
export class RemoteError extends Error {
  override name: string;
  readonly shortMessage: string;
  readonly code: number | string | undefined;
  /** Structured values the background attached (e.g. `retryAfterMs`); never parsed from the text. */
  readonly data: Readonly<Record<string, string | number | boolean>>;
  constructor(e: WireError) {
    super(e.shortMessage);
    this.name = e.name;
    this.shortMessage = e.shortMessage;
    this.code = e.code;
    this.data = e.data ?? {};
  }
}

/** Something that can send a message and await the reply (`browser.runtime.sendMessage`). */
type Send = (message: unknown) => Promise<unknown>;

const wireErrorSchema = v.object({
  name: v.string(),
  shortMessage: v.string(),
  code: v.optional(v.union([v.number(), v.string()])),
  data: v.optional(v.record(v.string(), v.union([v.string(), v.number(), v.boolean()]))),
});
/** The reply envelope (`Reply` of ./protocol); the result itself is the background's, typed by the contract. */
const replySchema = v.variant('ok', [v.object({ ok: v.literal(true), result: v.unknown() }), v.object({ ok: v.literal(false), error: wireErrorSchema })]);

/**
 * A typed call: `call('vault.status', {})` resolves `ProcedureOutput<'vault.status'>`.
 *
 * The second signature, with an explicit result type (`call<'x', T>(…)`), is `@deprecated`: it states
 * a result type unchecked. It stays only while the popup's screens move to the inferred form; drop the
 * type arguments.
 */
export type Call = {
  <N extends ProcedureName>(type: N, payload: ProcedureCallInput<N>): Promise<ProcedureOutput<N>>;
  /** @deprecated State no result type: `call(type, payload)` infers it from the contract. */
  <N extends ProcedureName, R>(type: N, payload: ProcedureCallInput<N>): Promise<R>;
};

/**
 * Creates a typed caller over `send`. Throws `RemoteError` for an error reply, and a `RemoteError`
 * named `NoReply` when nothing (or something that is not a reply) came back.
 */
export function createCaller(send: Send): Call {
  async function call(type: ProcedureName, payload: unknown): Promise<unknown> {
    const reply = v.safeParse(replySchema, await send({ type, payload }));
    if (!reply.success) throw new RemoteError({ name: 'NoReply', shortMessage: 'The extension did not answer. Try again.' });
    if (!reply.output.ok) throw new RemoteError(reply.output.error);
    return reply.output.result;
  }
  return call;
}
