/**
 * Reproducible releases: the zips a second build makes from the unpacked sources zip are byte-identical to
 * the release's, the sources zip's own build instructions (`npm run build:firefox`) rebuild the Firefox
 * files byte for byte, the sources zip and SHA256SUMS check out, and the SBOM lists what ships.
 *
 * The second build uses this checkout's `node_modules` (linked into the unpacked sources): the packages
 * `npm ci` installs from the lock file, without paying for a second install in CI.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { join, relative } from 'node:path';
import { sourceFiles, writeZip } from '../../lib/release/archive';
import { ROOT, RELEASE_DIR, artifact, ensureRelease, unzipFresh } from './artifacts';

let sources: string;

/** Every file under `dir`, relative, sorted. */
function filesUnder(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true }))
      e.isDirectory() ? walk(join(d, e.name)) : out.push(relative(dir, join(d, e.name)));
  };
  walk(dir);
  return out.sort();
}

beforeAll(() => {
  ensureRelease();
  sources = unzipFresh(artifact('sources'), 'countersign-sources-');
  symlinkSync(join(ROOT, 'node_modules'), join(sources, 'node_modules'));
}, 300_000);
afterAll(() => {
  if (sources) rmSync(sources, { recursive: true, force: true });
});

describe('reproducible release', () => {
  it('the sources zip holds the build instructions and no build output, dependencies or git data', () => {
    const files = filesUnder(sources).filter((f) => f !== 'node_modules');
    expect(files).toContain('lib/release/SOURCES.md');
    expect(files).toContain('package-lock.json');
    expect(files.filter((f) => /^(\.output|\.wxt|\.git|node_modules|test-results)\//.test(f))).toEqual([]);
    expect(readFileSync(join(sources, 'lib/release/SOURCES.md'), 'utf8')).toContain('npm run build:firefox');
  });

  it('npm run build:firefox in the unpacked sources rebuilds the Firefox zip file for file, byte for byte', () => {
    execFileSync('npm', ['run', 'build:firefox'], { cwd: sources, stdio: 'pipe', timeout: 180_000 });
    const built = join(sources, '.output', 'firefox-mv3-release');
    const shipped = unzipFresh(artifact('firefox'), 'countersign-firefox-zip-');
    try {
      expect(filesUnder(built)).toEqual(filesUnder(shipped));
      const differing = filesUnder(shipped).filter(
        (f) => !readFileSync(join(built, f)).equals(readFileSync(join(shipped, f))),
      );
      expect(differing).toEqual([]);
    } finally {
      rmSync(shipped, { recursive: true, force: true });
    }
  }, 200_000);

  it('a second release build from the sources gives byte-identical Chrome and Firefox zips', () => {
    for (const browser of ['chrome', 'firefox'] as const) {
      execFileSync('npx', ['wxt', 'zip', '-b', browser, '--mv3'], {
        cwd: sources,
        stdio: 'pipe',
        timeout: 180_000,
        env: { ...process.env, WXT_COUNTERSIGN_RELEASE: '1' },
      });
      const again = join(sources, '.output', relative(RELEASE_DIR, artifact(browser)));
      expect(readFileSync(again).equals(readFileSync(artifact(browser))), `${browser} zip differs`).toBe(true);
    }
  }, 400_000);

  it('the sources zip is the same bytes when written again from the same files', async () => {
    const again = join(sources, 'again.zip');
    await writeZip(ROOT, sourceFiles(ROOT), again);
    expect(readFileSync(again).equals(readFileSync(artifact('sources')))).toBe(true);
  });

  it('SHA256SUMS names every artifact and sha256sum -c accepts it', () => {
    const sums = readFileSync(join(RELEASE_DIR, 'SHA256SUMS'), 'utf8');
    expect(
      sums
        .trim()
        .split('\n')
        .map((l) => l.split('  ')[1])
        .sort(),
    ).toEqual(
      readdirSync(RELEASE_DIR)
        .filter((n) => n !== 'SHA256SUMS')
        .sort(),
    );
    expect(execFileSync('sha256sum', ['-c', 'SHA256SUMS'], { cwd: RELEASE_DIR, encoding: 'utf8' })).not.toContain(
      'FAILED',
    );
  });

  it('the SBOM is CycloneDX of the production dependencies, without a timestamp or serial number', () => {
    const sbom = JSON.parse(readFileSync(artifact('sbom'), 'utf8')) as {
      bomFormat: string;
      serialNumber?: string;
      metadata: { timestamp?: string };
      components: { name: string; version: string }[];
    };
    expect(sbom.bomFormat).toBe('CycloneDX');
    expect(sbom.serialNumber).toBeUndefined();
    expect(sbom.metadata.timestamp).toBeUndefined();
    const names = sbom.components.map((c) => c.name);
    expect(names).toEqual(expect.arrayContaining(['viem', 'preact', 'valibot', 'idb']));
    for (const dev of ['vitest', 'wxt', 'playwright-core', 'addons-linter']) expect(names).not.toContain(dev);
    expect(statSync(artifact('sbom')).size).toBeGreaterThan(1000);
    expect(existsSync(artifact('chrome'))).toBe(true);
  });
});
