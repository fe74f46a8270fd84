/**
 * Framing of messages between the page (main-world provider) and the content script, through
 * `window.postMessage`. Requests carry `target: 'countersign:content'`; replies and events carry
 * `target: 'countersign:page'`. The content script accepts only frames from the same window
 * (`event.source === window`) with exactly this shape; everything else is ignored. Pure: no browser API.
 */

import { readRpcError, type RpcErrorObject } from '../errors/rpc';

/** `target` of a request frame (page → content script). */
export const CONTENT_TARGET = 'countersign:content';
/** `target` of reply and event frames (content script → page). */
export const PAGE_TARGET = 'countersign:page';
/** Port name between content script and background. */
export const PORT_NAME = 'countersign:page-port';
/** Largest request accepted from a page (JSON text of `params`), in bytes. */
export const MAX_REQUEST_BYTES = 64 * 1024;
/** The events a page may receive (EIP-1193). */
export const PAGE_EVENTS = ['accountsChanged', 'connect', 'disconnect', 'chainChanged'] as const;
/** One of `PAGE_EVENTS`. */
export type PageEvent = (typeof PAGE_EVENTS)[number];

/** A request frame from the page. `id` is the page's own correlation id. */
export type RequestFrame = { target: typeof CONTENT_TARGET; id: string; method: string; params?: unknown };
/** What the background answers one request with, over the port (and, with `target`, to the page). */
export type Reply = { id: string; result: unknown } | { id: string; error: RpcErrorObject };
/** An event the background sends to the pages of an origin, over the port (and, with `target`, to the page). */
export type PageEventMessage = { event: PageEvent; data: unknown };
/** A reply frame to the page. */
export type ReplyFrame = { target: typeof PAGE_TARGET } & Reply;
/** An event frame to the page. */
export type EventFrame = { target: typeof PAGE_TARGET } & PageEventMessage;

/** A request as it travels over the port (content script → background): the frame without `target`. */
export type PortRequest = { id: string; method: string; params?: unknown };

function isPageEvent(x: unknown): x is PageEvent {
  return PAGE_EVENTS.some((e) => e === x);
}

/**
 * Reads a message received on the port by the background: `{ id, method, params? }` with `id` a string
 * of at most 64 characters (else undefined: dropped unanswered); a missing or non-string `method`
 * becomes `''` (answered 4200).
 */
export function readPortRequest(m: unknown): PortRequest | undefined {
  if (typeof m !== 'object' || m === null || !('id' in m) || typeof m.id !== 'string' || m.id.length > 64)
    return undefined;
  const method = 'method' in m && typeof m.method === 'string' ? m.method : '';
  return { id: m.id, method, ...('params' in m ? { params: m.params } : {}) };
}

/**
 * Reads a message received on the port (or the window) from the background's side: a reply (`id` with
 * `result` or `error`) or an event (`event` one of `PAGE_EVENTS`). Anything else: undefined (ignored).
 */
export function readReply(m: unknown): Reply | PageEventMessage | undefined {
  if (typeof m !== 'object' || m === null) return undefined;
  if ('id' in m && typeof m.id === 'string') {
    if ('error' in m && m.error) return { id: m.id, error: readRpcError(m.error) };
    return { id: m.id, result: 'result' in m ? (m.result ?? null) : null };
  }
  if ('event' in m && isPageEvent(m.event)) return { event: m.event, data: 'data' in m ? (m.data ?? null) : null };
  return undefined;
}

/**
 * Checks a frame received by the content script. Returns a clean copy (`{ id, method, params }`, params
 * round-tripped through JSON so no getters, prototypes or functions survive) or an error reason.
 */
export function readRequestFrame(
  data: unknown,
):
  { ok: true; id: string; method: string; params: unknown } | { ok: false; id?: string; reason: string; code: number } {
  if (typeof data !== 'object' || data === null || !('target' in data) || data.target !== CONTENT_TARGET)
    return { ok: false, reason: 'not ours', code: 0 };
  const id = 'id' in data && typeof data.id === 'string' && /^[A-Za-z0-9_-]{1,64}$/.test(data.id) ? data.id : undefined;
  if (!id) return { ok: false, reason: 'bad id', code: 0 };
  for (const k of Object.keys(data))
    if (!['target', 'id', 'method', 'params'].includes(k))
      return { ok: false, id, reason: `unexpected field ${k}`, code: -32600 };
  const method =
    'method' in data && typeof data.method === 'string' && /^[A-Za-z0-9_]{1,64}$/.test(data.method)
      ? data.method
      : undefined;
  if (!method) return { ok: false, id, reason: 'method must be a short identifier', code: -32600 };
  let params: unknown;
  if ('params' in data && data.params !== undefined) {
    let text: string | undefined;
    try {
      text = JSON.stringify(data.params);
    } catch {
      return { ok: false, id, reason: 'params must be JSON', code: -32602 };
    }
    if (text === undefined) return { ok: false, id, reason: 'params must be JSON', code: -32602 };
    if (new TextEncoder().encode(text).length > MAX_REQUEST_BYTES)
      return { ok: false, id, reason: 'request larger than 64 KiB', code: -32602 };
    params = JSON.parse(text);
  }
  return { ok: true, id, method, params };
}
