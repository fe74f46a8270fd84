/**
 * The sandbox's WebSocket streams on the HTTP server's `upgrade` (PROTOCOL.md §5.6):
 *
 * | path | stream |
 * |---|---|
 * | `/perps/v1/ws` | perps session and public market data (`perps.ts`) |
 * | `/clob/ws/market` | order-book market channel (`clob.ts`) |
 * | `/clob/ws/user` | order-book user channel (`clob.ts`) |
 *
 * Any other upgrade is refused (`404`). No subprotocol, no query. Node only (`ws`).
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import type { SandboxContext } from '../context';
import { ClobStreams } from './clob';
import { PerpsStreams } from './perps';
import { SUBSCRIBE_FRAME_MAX_CHARS } from './socket';

/**
 * The streams of one sandbox: the `upgrade` handler to attach to its server, `sync()` after each request, `close()`.
 */
export type SandboxStreams = {
  /** Handles an HTTP upgrade (`server.on('upgrade', streams.upgrade)`). */
  upgrade: (req: IncomingMessage, socket: Duplex, head: Buffer) => void;
  /** Pushes what changed in the order-book venue (the perps venue reports its own changes). */
  sync: () => void;
  /** Closes every stream socket and stops listening to the venues. */
  close: () => void;
};

/**
 * Creates the streams of a sandbox (`ctx`; `fetchApp` its app's `fetch`, through which session commands
 * run as REST); attach `upgrade` to the Node server and call `sync` after each request.
 */
export function createStreams(ctx: SandboxContext, fetchApp: (req: Request) => Promise<Response>): SandboxStreams {
  // A market-channel subscribe may name any number of token ids (the frame limit, 4 MiB); every other
  // frame is refused by its reader above 64 KiB.
  const wss = new WebSocketServer({ noServer: true, maxPayload: SUBSCRIBE_FRAME_MAX_CHARS });
  const perps = new PerpsStreams(ctx, fetchApp);
  const clob = new ClobStreams(ctx);
  const routes: Readonly<Record<string, (ws: WebSocket) => void>> = {
    '/perps/v1/ws': (ws) => perps.attach(ws),
    '/clob/ws/market': (ws) => clob.attachMarket(ws),
    '/clob/ws/user': (ws) => clob.attachUser(ws),
  };
  return {
    upgrade: (req, socket, head) => {
      const path = new URL(req.url ?? '/', 'http://sandbox').pathname;
      const route = routes[path];
      if (!route) {
        socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\n\r\n');
        return;
      }
      wss.handleUpgrade(req, socket, head, (ws) => route(ws));
    },
    sync: () => clob.sync(),
    close: () => {
      perps.close();
      for (const ws of wss.clients) ws.terminate();
      wss.close();
    },
  };
}
