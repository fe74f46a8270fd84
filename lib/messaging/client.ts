/**
 * Extension-page side of the message contract (popup, approval window): `call(type, payload)` sends one
 * message through `runtime.sendMessage` and returns the result or throws a `RemoteError` carrying the
 * background's `{ name, shortMessage, code? }`.
 */
import type { ProcedureCallInput, ProcedureName, Reply } from './protocol';
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
export type Send = (message: unknown) => Promise<unknown>;

/** Creates a typed caller over `send`. */
export function createCaller(send: Send) {
  return async function call<N extends ProcedureName, R = unknown>(type: N, payload: ProcedureCallInput<N>): Promise<R> {
    const reply = (await send({ type, payload })) as Reply<R> | undefined;
    if (!reply || typeof reply !== 'object') throw new RemoteError({ name: 'NoReply', shortMessage: 'The extension did not answer. Try again.' });
    if (!reply.ok) throw new RemoteError(reply.error);
    return reply.result;
  };
}
