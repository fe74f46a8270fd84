/**
 * What every sandbox stream shares (Node only): reading a client frame and sending one, late when the
 * service has an added delay (`SandboxContext.delayMs`, the latency test hook).
 */
import { WebSocket } from 'ws';
import { parseJson } from '../http';

/** A client text frame parsed as a JSON object, or undefined (not JSON, not an object, over 64 KiB). */
export function parseFrame(text: string): Record<string, unknown> | undefined {
  if (text.length > 65_536) return undefined;
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
