/**
 * Background side of the message contract: identifies the sender from the browser's `sender`, checks
 * the procedure exists and that this kind of sender may call it, validates the payload, runs the
 * handler, and turns any error into a `WireError` (name, shortMessage, code — never cause or details).
 */
import { BaseError, toWireError } from '../errors/base';
import { parseOrThrow } from '../validation';
import { PROCEDURES, type ProcedureInput, type ProcedureName, type Reply, type SenderKind } from './protocol';

/** The subset of `runtime.MessageSender` the router reads. */
export type BrowserSender = { id?: string; url?: string; origin?: string; frameId?: number; tab?: { id?: number; url?: string } };

/** A sender identified from the browser's metadata. `origin` is the page origin for content scripts. */
export type IdentifiedSender = { kind: SenderKind; origin: string; tabId?: number };

/**
 * Identifies a sender: extension pages by their URL under this extension's origin (`/popup.html`,
 * `/approval.html`), content scripts by a top-frame tab with an http(s) URL. Anything else — another
 * extension, a sub-frame, an unknown page — is `undefined` and refused.
 */
export function identifySender(sender: BrowserSender, extensionId: string, extensionOrigin: string): IdentifiedSender | undefined {
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
    if (url.pathname === '/popup.html') return { kind: 'popup', origin: extOrigin };
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

/** Handlers of every procedure. */
export type Handlers = { [N in ProcedureName]: (input: ProcedureInput<N>, sender: IdentifiedSender) => Promise<unknown> };

/** Builds the dispatcher for `runtime.onMessage`. */
export function createRouter(handlers: Handlers, ids: { extensionId: string; extensionOrigin: string }) {
  return async (message: unknown, sender: BrowserSender): Promise<Reply> => {
    try {
      const who = identifySender(sender, ids.extensionId, ids.extensionOrigin);
      if (!who) throw new UnauthorizedSenderError();
      const m = message as { type?: unknown; payload?: unknown } | null;
      if (!m || typeof m !== 'object' || typeof m.type !== 'string' || !Object.hasOwn(PROCEDURES, m.type)) throw new UnknownProcedureError();
      const name = m.type as ProcedureName;
      const proc = PROCEDURES[name];
      if (!(proc.senders as readonly SenderKind[]).includes(who.kind)) throw new UnauthorizedSenderError();
      const input = parseOrThrow(proc.input, m.payload ?? {}, 'payload');
      const result = await (handlers[name] as (i: unknown, s: IdentifiedSender) => Promise<unknown>)(input, who);
      return { ok: true, result: result ?? null };
    } catch (err) {
      return { ok: false, error: toWireError(err) };
    }
  };
}
