/**
 * Background side of the message contract: identifies the sender from the browser's `sender`, checks
 * the procedure exists and that this kind of sender may call it, validates the payload, runs the
 * handler, optionally checks its answer against the output schema (`RouterOptions.checkOutputs`), and
 * turns any error into a `WireError` (name, shortMessage, code and data when present — never cause or details).
 */
import * as v from 'valibot';
import { BaseError, toWireError } from '../errors/base';
import { parseOrThrow } from '../validation';
import {
  isProcedureName,
  PROCEDURES,
  type ProcedureInput,
  type ProcedureName,
  type ProcedureOutput,
  type Reply,
  type SenderKind,
} from './protocol';

/** The subset of `runtime.MessageSender` the router reads. */
export type BrowserSender = {
  id?: string;
  url?: string;
  origin?: string;
  frameId?: number;
  tab?: { id?: number; url?: string };
};

/** A sender identified from the browser's metadata. `origin` is the page origin for content scripts. */
export type IdentifiedSender = { kind: SenderKind; origin: string; tabId?: number };

/**
 * Identifies a sender: extension pages by their URL under this extension's origin (`/popup.html`, and
 * the side panel `/sidepanel.html` — the same cockpit — as the popup; `/approval.html`), content scripts by a top-frame
 * tab with an http(s) URL. Anything else — another extension, a sub-frame, an unknown page — is `undefined` and
 * refused.
 */
export function identifySender(
  sender: BrowserSender,
  extensionId: string,
  extensionOrigin: string,
): IdentifiedSender | undefined {
  if (sender.id !== extensionId || !sender.url) return undefined;
  let url: URL;
  try {
    url = new URL(sender.url);
  } catch {
    return undefined;
  }
  // `URL.origin` is "null" for non-special schemes in some engines; compare scheme and host instead.
  let ext: URL;
  try {
    ext = new URL(extensionOrigin);
  } catch {
    return undefined;
  }
  const extOrigin = `${ext.protocol}//${ext.host}`;
  if (`${url.protocol}//${url.host}` === extOrigin) {
    if (url.pathname === '/popup.html' || url.pathname === '/sidepanel.html')
      return { kind: 'popup', origin: extOrigin };
    if (url.pathname === '/approval.html') return { kind: 'approval', origin: extOrigin };
    return undefined;
  }
  if (!sender.tab || sender.frameId !== 0 || (url.protocol !== 'https:' && url.protocol !== 'http:')) return undefined;
  return { kind: 'content', origin: url.origin, ...(sender.tab.id === undefined ? {} : { tabId: sender.tab.id }) };
}

/** Thrown when a sender may not call a procedure (EIP-1193 4100). */
export class UnauthorizedSenderError extends BaseError {
  override name = 'Messaging.UnauthorizedSenderError';
  static override readonly code = 4100;
  constructor() {
    super('This context is not allowed to make that request.');
  }
}

/** Thrown for a message that names no known procedure (EIP-1193 4200). */
export class UnknownProcedureError extends BaseError {
  override name = 'Messaging.UnknownProcedureError';
  static override readonly code = 4200;
  constructor() {
    super('Unknown request.');
  }
}

/**
 * Thrown (as an error reply) when a handler's answer does not match its output schema: a bug, reported only where
 * outputs are checked.
 */
export class InvalidOutputError extends BaseError {
  override name = 'Messaging.InvalidOutputError';
  constructor(procedure: ProcedureName, path: string, reason: string) {
    super(`The background answered ${procedure} in an unexpected shape.`, {
      details: `${path || 'result'}: ${reason}`,
      data: { procedure, field: path || 'result' },
    });
  }
}

/**
 * One procedure's handler: receives the validated input and the identified sender, answers the output schema's type.
 */
export type Handler<N extends ProcedureName> = (
  input: ProcedureInput<N>,
  sender: IdentifiedSender,
) => Promise<ProcedureOutput<N>>;

/** Handlers of every procedure (a handler answering another shape fails typecheck). */
export type Handlers = { [N in ProcedureName]: Handler<N> };

/**
 * Router options. `checkOutputs`: validate every handler's answer against its output schema and reply
 * `Messaging.InvalidOutputError` when it does not match (tests and development builds: pass
 * `OUTPUT_CHECKS`; production builds skip the cost — gateway answers are validated at the gateway
 * clients either way). `mapError`: turns a thrown value into the error the reply carries (the
 * background's storage failures in words), undefined to keep it.
 */
export type RouterOptions = { checkOutputs?: boolean; mapError?: (err: unknown) => unknown };

/**
 * Whether this build checks handlers' outputs: the WXT dev server (`import.meta.env.DEV`, Vite) and
 * vitest (`import.meta.env.MODE === 'test'`, which also sets `DEV`); false in `wxt build` / `wxt zip`.
 */
export const OUTPUT_CHECKS: boolean = import.meta.env?.DEV === true || import.meta.env?.MODE === 'test';

/** Runs procedure `name`: validates the payload, calls its handler, and (when asked) checks the answer. */
async function run<N extends ProcedureName>(
  name: N,
  handlers: Handlers,
  payload: unknown,
  who: IdentifiedSender,
  checkOutputs: boolean,
): Promise<ProcedureOutput<N>> {
  const proc = PROCEDURES[name];
  const input = parseOrThrow(proc.input, payload, 'payload');
  const handler: Handler<N> = handlers[name];
  const result = await handler(input, who);
  if (checkOutputs) {
    const checked = v.safeParse(proc.output, result);
    if (!checked.success) {
      const issue = checked.issues[0];
      throw new InvalidOutputError(name, v.getDotPath(issue) ?? '', issue.message);
    }
  }
  return result;
}

/** Builds the dispatcher for `runtime.onMessage`: every failure becomes an error reply, never a throw. */
export function createRouter(
  handlers: Handlers,
  ids: { extensionId: string; extensionOrigin: string },
  options: RouterOptions = {},
) {
  return async (message: unknown, sender: BrowserSender): Promise<Reply> => {
    try {
      const who = identifySender(sender, ids.extensionId, ids.extensionOrigin);
      if (!who) throw new UnauthorizedSenderError();
      if (!message || typeof message !== 'object' || !('type' in message) || !isProcedureName(message.type))
        throw new UnknownProcedureError();
      const name = message.type;
      if (!PROCEDURES[name].senders.includes(who.kind)) throw new UnauthorizedSenderError();
      const payload = 'payload' in message ? message.payload : undefined;
      const result = await run(name, handlers, payload ?? {}, who, options.checkOutputs ?? false);
      return { ok: true, result: result ?? null };
    } catch (err) {
      return { ok: false, error: toWireError(options.mapError?.(err) ?? err) };
    }
  };
}
