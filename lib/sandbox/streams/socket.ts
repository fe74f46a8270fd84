/**
 * What every sandbox stream shares (Node only): reading a client frame and sending one, late when the
 * service has an added delay (`SandboxContext.delayMs`, the latency test hook).
 */
import { WebSocket } from 'ws';
import { parseJson } from '../http';

/** Largest client frame a stream reads by default (characters): commands, auth, channel lists. */
export const FRAME_MAX_CHARS = 65_536;
/**
 * Largest order-book market-channel frame (characters, 4 MiB): a subscribe names token ids with no cap
 * (the seed), ≈ 80 characters each, so about 50 000 ids fit. The WebSocket server's `maxPayload` is
 * the same (`hub.ts`).
 */
export const SUBSCRIBE_FRAME_MAX_CHARS = 4 * 1024 * 1024;

/**
 * A client text frame parsed as a JSON object, or undefined (not JSON, not an object, over `maxChars`, default {@link
 * FRAME_MAX_CHARS}).
 */
export function parseFrame(text: string, maxChars = FRAME_MAX_CHARS): Record<string, unknown> | undefined {
  if (text.length > maxChars) return undefined;
  const v = parseJson(text);
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return undefined;
  return Object.fromEntries(Object.entries(v));
}

/**
 * Sends `text` on `ws` now, or after `delayMs` (frames sent with the same delay keep their order).
 * Nothing is sent once the socket is no longer open.
 */
export function sendLater(ws: WebSocket, text: string, delayMs: number): void {
  const send = () => {
    if (ws.readyState === WebSocket.OPEN) ws.send(text);
  };
  if (delayMs > 0) setTimeout(send, delayMs);
  else send();
}
