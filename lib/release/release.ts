/**
 * `npm run release`: the store artifacts under `.output/release/`, reproducible byte for byte from the
 * same sources:
 * - `countersign-<version>-chrome.zip`, `countersign-<version>-firefox.zip`: release builds
 *   (`WXT_COUNTERSIGN_RELEASE=1`: no loopback host permission, no sandbox default; see `wxt.config.ts`) zipped by WXT
 *   (sorted entries, no timestamps);
 * - `countersign-<version>-sources.zip`: the sources Mozilla asks for when code is bundled (tracked files
 *   and untracked unignored ones, `lib/release/archive.ts`), with the build instructions `lib/release/SOURCES.md`;
 * - `countersign-<version>-sbom.cdx.json`: CycloneDX SBOM of the production dependencies (what ships),
 *   reproducible output (no serial number or timestamp);
 * - `SHA256SUMS` of all of the above.
 * `SOURCE_DATE_EPOCH` is set to the last commit's time for every tool run here (none of them stamps the
 * time today; this keeps it so). Exits non-zero on the first failing step.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { sourceFiles, writeSha256Sums, writeZip } from './archive';

const ROOT = resolve(import.meta.dirname, '../..');
const OUT = join(ROOT, '.output', 'release');
const { version, name } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  version: string;
  name: string;
};

/** The last commit's time (Unix seconds), or 1980-01-01 outside a git checkout (sources zips carry no .git). */
function sourceDateEpoch(): string {
  if (process.env.SOURCE_DATE_EPOCH) return process.env.SOURCE_DATE_EPOCH;
  try {
    return execFileSync('git', ['log', '-1', '--format=%ct'], { cwd: ROOT, encoding: 'utf8' }).trim() || '315532800';
  } catch {
    return '315532800';
  }
}

const env = {
  ...process.env,
  WXT_COUNTERSIGN_RELEASE: '1',
  NODE_ENV: 'production',
  SOURCE_DATE_EPOCH: sourceDateEpoch(),
  TZ: 'UTC',
  LC_ALL: 'C',
};
const run = (cmd: string, args: string[]) => execFileSync(cmd, args, { cwd: ROOT, env, stdio: 'inherit' });

rmSync(OUT, { recursive: true, force: true });
mkdirSync(OUT, { recursive: true });

for (const browser of ['chrome', 'firefox'] as const) {
  run('npx', ['wxt', 'zip', '-b', browser, '--mv3']);
  const zip = `${name}-${version}-${browser}.zip`;
  renameSync(join(ROOT, '.output', zip), join(OUT, zip));
}

await writeZip(ROOT, sourceFiles(ROOT), join(OUT, `${name}-${version}-sources.zip`));

run('npx', [
  'cyclonedx-npm',
  '--omit',
  'dev',
  '--output-reproducible',
  '--spec-version',
  '1.6',
  '--output-format',
  'JSON',
  '--output-file',
  join(OUT, `${name}-${version}-sbom.cdx.json`),
]);

process.stdout.write(writeSha256Sums(OUT));
console.log(`release artifacts in ${OUT}`);
