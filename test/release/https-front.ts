/**
 * An https and wss front for the sandbox (test-only): a release injects the page provider only into
 * https pages, as a trading site is served, and sends signatures and secrets only over https: and wss:
 * (`lib/http/transport.ts`), so the installed-release tests open the demo page through this proxy and
 * point a custom setup at it (a throw-away self-signed certificate for 127.0.0.1; the browsers are told
 * to accept it). WebSocket upgrades are passed through to the sandbox as they came.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { createServer, type Server } from 'node:https';
import { connect, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_SETTINGS, SANDBOX_BASE, type Settings } from '../../lib/settings';
import { presetValuesOf } from '../../lib/settings/presets';

/**
 * A running front: `url` (`https://127.0.0.1:<port>`; `wss://` for WebSockets) forwards every request to the target as
 * it came.
 */
export type HttpsFront = { url: string; close: () => Promise<void> };

/** Starts an https front on an ephemeral port forwarding to `target` (e.g. `http://127.0.0.1:8787`). */
export async function startHttpsFront(target: string): Promise<HttpsFront> {
  const dir = mkdtempSync(join(tmpdir(), 'countersign-tls-'));
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
      '-keyout',
      join(dir, 'key.pem'),
      '-out',
      join(dir, 'cert.pem'),
    ],
    { stdio: 'ignore' },
  );
  const to = new URL(target);
  const server: Server = createServer(
    { key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) },
    (req, res) => {
      const upstream = httpRequest(
        {
          host: to.hostname,
          port: to.port,
          path: req.url,
          method: req.method,
          headers: { ...req.headers, host: to.host },
        },
        (up) => {
          res.writeHead(up.statusCode ?? 502, up.headers);
          up.pipe(res);
        },
      );
      upstream.on('error', () => res.writeHead(502).end());
      req.pipe(upstream);
    },
  );
  // A WebSocket upgrade (the perps session, the order-book channels): the raw bytes both ways once the
  // upstream answered the handshake.
  server.on('upgrade', (req, socket, head) => {
    const up = connect(Number(to.port), to.hostname, () => {
      const lines = [
        `${req.method ?? 'GET'} ${req.url ?? '/'} HTTP/1.1`,
        ...Object.entries({ ...req.headers, host: to.host }).flatMap(([k, v]) =>
          v === undefined ? [] : (Array.isArray(v) ? v : [v]).map((x) => `${k}: ${x}`),
        ),
      ];
      up.write(`${lines.join('\r\n')}\r\n\r\n`);
      if (head.length) up.write(head);
      up.pipe(socket);
      socket.pipe(up);
    });
    const end = () => {
      up.destroy();
      socket.destroy();
    };
    up.on('error', end);
    socket.on('error', end);
  });
  rmSync(dir, { recursive: true, force: true });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `https://127.0.0.1:${port}`, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

/**
 * The custom setup that puts every service of the Sandbox preset behind `front` (`https:` / `wss:`), as a
 * person would type it in Settings: the sandbox's paths, chain id, header names and perps domain.
 */
export function frontSetup(front: HttpsFront): Partial<Settings> {
  const wss = front.url.replace(/^https/, 'wss');
  const sandbox = presetValuesOf(DEFAULT_SETTINGS);
  const moved = Object.fromEntries(
    Object.entries(sandbox).map(([k, v]) => [
      k,
      typeof v === 'string' ? v.replace(SANDBOX_BASE, front.url).replace(SANDBOX_BASE.replace(/^http/, 'ws'), wss) : v,
    ]),
  );
  return { ...moved, preset: 'custom' };
}
