/**
 * Framing of messages between the page (main-world provider) and the content script, through
 * `window.postMessage`. Requests carry `target: 'countersign:content'`; replies and events carry
 * `target: 'countersign:page'`. The content script accepts only frames from the same window
 * (`event.source === window`) with exactly this shape; everything else is ignored. Pure: no browser API.
 */

export const CONTENT_TARGET = 'countersign:content';
export const PAGE_TARGET = 'countersign:page';
/** Port name between content script and background. */
export const PORT_NAME = 'countersign:page-port';
/** Largest request accepted from a page (JSON text of `params`), in bytes. */
export const MAX_REQUEST_BYTES = 64 * 1024;

/** A request frame from the page. `id` is the page's own correlation id. */
export type RequestFrame = { target: typeof CONTENT_TARGET; id: string; method: string; params?: unknown };
/** A reply frame to the page. */
export type ReplyFrame = { target: typeof PAGE_TARGET; id: string; result?: unknown; error?: { code: number; message: string; data?: unknown } };
/** An event frame to the page. */
export type EventFrame = { target: typeof PAGE_TARGET; event: 'accountsChanged' | 'connect' | 'disconnect' | 'chainChanged'; data: unknown };

/**
 * Checks a frame received by the content script. Returns a clean copy (`{ id, method, params }`, params
 * round-tripped through JSON so no getters, prototypes or functions survive) or an error reason.
 */
export function readRequestFrame(data: unknown): { ok: true; id: string; method: string; params: unknown } | { ok: false; id?: string; reason: string; code: number } {
  if (typeof data !== 'object' || data === null || (data as { target?: unknown }).target !== CONTENT_TARGET) return { ok: false, reason: 'not ours', code: 0 };
  const f = data as Record<string, unknown>;
  const id = typeof f.id === 'string' && /^[A-Za-z0-9_-]{1,64}$/.test(f.id) ? f.id : undefined;
  if (!id) return { ok: false, reason: 'bad id', code: 0 };
  for (const k of Object.keys(f)) if (!['target', 'id', 'method', 'params'].includes(k)) return { ok: false, id, reason: `unexpected field ${k}`, code: -32600 };
  if (typeof f.method !== 'string' || !/^[A-Za-z0-9_]{1,64}$/.test(f.method)) return { ok: false, id, reason: 'method must be a short identifier', code: -32600 };
  let params: unknown;
  if (f.params !== undefined) {
    let text: string;
    try {
      text = JSON.stringify(f.params);
    } catch {
      return { ok: false, id, reason: 'params must be JSON', code: -32602 };
    }
    if (text === undefined) return { ok: false, id, reason: 'params must be JSON', code: -32602 };
    if (new TextEncoder().encode(text).length > MAX_REQUEST_BYTES) return { ok: false, id, reason: 'request larger than 64 KiB', code: -32602 };
    params = JSON.parse(text);
  }
  return { ok: true, id, method: f.method, params };
}
