/**
 * `npm start`: the main job. Builds the extension, starts the sandbox gateway on 127.0.0.1 (port from
 * `SANDBOX_PORT`, default 8787), and — when a display exists and Debian's Chromium is installed —
 * opens Chromium with the extension loaded at the demo dapp (`/demo`). Without a display it prints
 * how to load the built folder.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { startSandbox } from './server';

const root = resolve(import.meta.dirname, '../..');
const build = spawnSync('npx', ['wxt', 'build'], { cwd: root, stdio: 'inherit' });
if (build.status !== 0) process.exit(build.status ?? 1);
const ext = join(root, '.output/chrome-mv3');

const sb = await startSandbox(Number(process.env.SANDBOX_PORT ?? 8787));
console.log(`\nSandbox gateway: ${sb.url}  (perps ${sb.url}/perps, order book ${sb.url}/clob)`);
console.log(`Demo owner key (sandbox only): ${sb.demo.owner.privateKey}`);

const chromium = ['/usr/lib/chromium/chromium', '/usr/bin/chromium'].find((p) => existsSync(p));
if (process.env.DISPLAY && chromium) {
  const profile = mkdtempSync(join(tmpdir(), 'countersign-'));
  const child = spawn(
    chromium,
    [
      `--user-data-dir=${profile}`,
      `--disable-extensions-except=${ext}`,
      `--load-extension=${ext}`,
      '--no-first-run',
      `${sb.url}/demo`,
    ],
    { stdio: 'ignore' },
  );
  child.on('exit', () => void sb.close().then(() => process.exit(0)));
} else {
  console.log(`\nNo display (or no Chromium): load the built extension by hand —
  chrome://extensions → Developer mode → Load unpacked → ${ext}
then open the demo dapp at ${sb.url}/demo
The sandbox keeps running; press Ctrl+C to stop.`);
}
const stop = () => void sb.close().then(() => process.exit(0));
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
