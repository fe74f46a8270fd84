/**
 * The release artifacts the `release` tier of `npm test` makes first (`npm run release` → `.output/release/`),
 * as the tests in this folder read them. Test-only.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

export const ROOT = resolve(import.meta.dirname, '../..');
export const RELEASE_DIR = join(ROOT, '.output', 'release');
const { name, version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  name: string;
  version: string;
};

/** Path of release artifact `kind` (`chrome`, `firefox`, `sources` zip; `sbom` JSON) in `.output/release/`. */
export function artifact(kind: 'chrome' | 'firefox' | 'sources' | 'sbom'): string {
  return join(RELEASE_DIR, kind === 'sbom' ? `${name}-${version}-sbom.cdx.json` : `${name}-${version}-${kind}.zip`);
}

/**
 * Makes the release artifacts unless `.output/release/SHA256SUMS` exists (the tier ran `npm run release`
 * just before; a local run of one file makes them itself).
 */
export function ensureRelease(): void {
  if (existsSync(join(RELEASE_DIR, 'SHA256SUMS'))) return;
  execFileSync('npm', ['run', 'release'], { cwd: ROOT, stdio: 'pipe', timeout: 300_000 });
}

/** Unzips `zip` into a fresh temporary directory (prefix `prefix`) and returns the directory. */
export function unzipFresh(zip: string, prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  execFileSync('unzip', ['-q', zip, '-d', dir]);
  return dir;
}
