/**
 * The site client as a site gets it (test-only): built (tsc, `lib/dapp/tsconfig.build.json`) and packed
 * (`npm pack`) from a copy of `lib/dapp` in a temporary folder, and installed from the tarball — not a path —
 * into a fresh site folder with viem 2.57.1.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { build } from 'esbuild';

const ROOT = resolve(import.meta.dirname, '../..');
const DAPP = join(ROOT, 'lib/dapp');

/** Runs `cmd args` in `cwd` (offline-safe npm: no audit, no fund, cache first, no install scripts); its stdout. */
export const run = (cmd: string, args: string[], cwd: string): string =>
  execFileSync(cmd, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 170_000 });

/** A packed site client: the tarball's path, `npm pack --json`'s file list and the tarball's size (bytes). */
export type PackedSiteClient = { tarball: string; files: { path: string; size: number }[]; size: number };

/** Builds and packs the site client in `tmp` (a folder of the test's own). Throws when `npm pack` prints no result. */
export function packSiteClient(tmp: string): PackedSiteClient {
  const pkg = join(tmp, 'pkg');
  mkdirSync(pkg);
  for (const f of ['package.json', 'README.md', 'CHANGELOG.md', 'API.md']) copyFileSync(join(DAPP, f), join(pkg, f));
  run(
    join(ROOT, 'node_modules/.bin/tsc'),
    ['-p', join(DAPP, 'tsconfig.build.json'), '--outDir', join(pkg, 'dist')],
    ROOT,
  );
  const [out] = JSON.parse(run('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', tmp], pkg)) as {
    filename: string;
    size: number;
    files: { path: string; size: number }[];
  }[];
  if (!out) throw new Error('npm pack printed no result');
  return { tarball: join(tmp, out.filename), files: out.files, size: out.size };
}

/** A new site folder `dir` (an ES module package) with `tarball` and viem 2.57.1 installed from npm. */
export function installSite(dir: string, tarball: string): void {
  mkdirSync(dir);
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'site', private: true, type: 'module' }));
  run(
    'npm',
    ['install', tarball, 'viem@2.57.1', '--no-audit', '--no-fund', '--prefer-offline', '--ignore-scripts'],
    dir,
  );
}

/** The scratch site: the package's discovery, actions and errors over a viem wallet client, plus viem's ERC-7715. */
export const SITE_SCRIPT = `
import { createWalletClient, custom } from 'viem';
import { erc7715Actions } from 'viem/experimental';
import {
  countersignActions, discoverCountersign, newClientOrderId, requireCountersign, toCountersignError,
} from '@countersign/site-client';
const settle = (p) => p.then((value) => ({ ok: true, value }), (err) => {
  const e = toCountersignError(err);
  return { ok: false, code: e.rpcCode, type: e.name, message: e.shortMessage };
});
window.__site = { ready: () => false };
discoverCountersign().then((provider) => {
  const client = createWalletClient({ transport: custom(provider) })
    .extend(countersignActions)
    .extend(erc7715Actions());
  window.__site = {
    ready: () => true,
    require: (methods) => settle(requireCountersign(client, { methods })),
    connect: () => settle(client.requestAddresses()),
    getPermissions: () => settle(client.getPermissions()),
    requestPermissions: () => settle(client.requestPermissions({ eth_accounts: {} })),
    grant: (args) => settle(client.grantPermissions(args)),
    perps: (params) => settle(client.perpsSendCommand(params)),
    signPerps: (params) => settle(client.perpsSignCommand(params)),
    clob: (params) => settle(client.clobPostOrders(params)),
    coid: () => newClientOrderId(),
    cancelClob: (clobUrl, orderID) => settle((async () => {
      const body = JSON.stringify({ orderID });
      const headers = await client.clobSignRequest({ method: 'DELETE', requestPath: '/order', body });
      const res = await fetch(clobUrl + '/order', {
        method: 'DELETE', headers: { ...headers, 'content-type': 'application/json' }, body,
      });
      return { status: res.status, answer: await res.json() };
    })()),
  };
});
`;

/** A served scratch site: its `url` (http://127.0.0.1:port/), the files its bundle was built from, `close`. */
export type ServedSite = { url: string; bundledFrom: string[]; close: () => Promise<void> };

/**
 * Packs the site client, installs it into a scratch site with viem, bundles `SITE_SCRIPT` there with esbuild (the
 * package resolved from the site's node_modules) and serves the page on 127.0.0.1. `window.__site` is the page's API.
 */
export async function serveSite(): Promise<ServedSite> {
  const tmp = mkdtempSync(join(tmpdir(), 'site-client-e2e-'));
  const dir = join(tmp, 'site');
  installSite(dir, packSiteClient(tmp).tarball);
  writeFileSync(join(dir, 'app.js'), SITE_SCRIPT);
  const bundle = await build({
    entryPoints: [join(dir, 'app.js')],
    absWorkingDir: dir,
    bundle: true,
    format: 'iife',
    platform: 'browser',
    target: 'es2022',
    write: false,
    metafile: true,
    logLevel: 'silent',
  });
  const js = bundle.outputFiles[0]?.text ?? '';
  const server = createServer((req, res) => {
    if (req.url === '/app.js') res.writeHead(200, { 'content-type': 'text/javascript' }).end(js);
    else
      res
        .writeHead(200, { 'content-type': 'text/html' })
        .end('<!doctype html><title>site</title><script src="/app.js"></script>');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    bundledFrom: Object.keys(bundle.metafile.inputs),
    close: async () => {
      await new Promise((r) => server.close(r));
      rmSync(tmp, { recursive: true, force: true });
    },
  };
}

/**
 * What the site passes to viem's `erc7715Actions().grantPermissions` for a perps grant on ETH-PERP (instrument 2):
 * orders and their cancels, 2 000 USDC per order, 20 000 per 24 h, within 2 % of the mark, for an hour.
 */
export const ethGrantRequest = (account: string) => ({
  account,
  expiry: Math.floor(Date.now() / 1000) + 3600,
  permissions: [
    {
      type: { custom: 'countersign-grant' },
      data: {
        venue: 'perps',
        instruments: [2],
        allow: { order: true, cancel: true },
        maxNotional: '2000',
        dailyNotional: '20000',
        priceBandPct: '2',
      },
      policies: [],
      required: true,
    },
  ],
});
