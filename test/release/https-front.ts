/**
 * An https front for the sandbox's demo page (test-only): a release injects the page provider only into
 * https pages, as a trading site is served, so the installed-release tests open the demo page through
 * this proxy (a throw-away self-signed certificate for 127.0.0.1; the browsers are told to accept it).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A running front: `url` (`https://127.0.0.1:<port>`) forwards every request to the target as it came. */
export type HttpsFront = { url: string; close: () => Promise<void> };

/** Starts an https front on an ephemeral port forwarding to `target` (e.g. `http://127.0.0.1:8787`). */
export async function startHttpsFront(target: string): Promise<HttpsFront> {
  const dir = mkdtempSync(join(tmpdir(), 'countersign-tls-'));
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem')], { stdio: 'ignore' });
  const to = new URL(target);
  const server: Server = createServer({ key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) }, (req, res) => {
    const upstream = httpRequest({ host: to.hostname, port: to.port, path: req.url, method: req.method, headers: { ...req.headers, host: to.host } }, (up) => {
      res.writeHead(up.statusCode ?? 502, up.headers);
      up.pipe(res);
    });
    upstream.on('error', () => res.writeHead(502).end());
    req.pipe(upstream);
  });
  rmSync(dir, { recursive: true, force: true });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `https://127.0.0.1:${port}`, close: () => new Promise((resolve) => server.close(() => resolve())) };
}
