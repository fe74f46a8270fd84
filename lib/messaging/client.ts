/**
 * Extension-page side of the message contract (popup, approval window): `call(type, payload)` sends one
 * message through `runtime.sendMessage` and returns the result — typed by the procedure's output schema
 * (`ProcedureOutput<N>`) — or throws a `RemoteError` carrying the background's `{ name, shortMessage, code? }`.
 */
import * as v from 'valibot';
import { PROCEDURES, type ProcedureCallInput, type ProcedureName, type ProcedureOutput } from './protocol';
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
const replySchema = v.variant('ok', [
  v.object({ ok: v.literal(true), result: v.unknown() }),
  v.object({ ok: v.literal(false), error: wireErrorSchema }),
]);

/**
 * A typed call: `call('vault.status', {})` resolves `ProcedureOutput<'vault.status'>`.
 * No result type is ever written at a call site: it comes from the procedure's output schema.
 */
export type Call = <N extends ProcedureName>(type: N, payload: ProcedureCallInput<N>) => Promise<ProcedureOutput<N>>;

/**
 * Creates a typed caller over `send`. The answer is parsed by the procedure's output schema, so its type
 * is the contract's and an answer of another shape never reaches a screen. Throws `RemoteError` for an
 * error reply, a `RemoteError` named `NoReply` when nothing (or something that is not a reply) came back,
 * and one named `Messaging.InvalidOutputError` for an answer that does not match the output schema.
 */
export function createCaller(send: Send): Call {
  return async function call<N extends ProcedureName>(
    type: N,
    payload: ProcedureCallInput<N>,
  ): Promise<ProcedureOutput<N>> {
    const reply = v.safeParse(replySchema, await send({ type, payload }));
    if (!reply.success)
      throw new RemoteError({ name: 'NoReply', shortMessage: 'The extension did not answer. Try again.' });
    if (!reply.output.ok) throw new RemoteError(reply.output.error);
    const answer = v.safeParse(PROCEDURES[type].output, reply.output.result);
    if (!answer.success) {
      const field = v.getDotPath(answer.issues[0]) ?? '';
      throw new RemoteError({
        name: 'Messaging.InvalidOutputError',
        shortMessage: 'The extension answered in an unexpected shape. Try again.',
        data: { procedure: type, field },
      });
    }
    return answer.output;
  };
}
