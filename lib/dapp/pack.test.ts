/**
 * The site client as a site installs it: built (tsc, `tsconfig.build.json`) and packed (`npm pack`) from a
 * copy of this folder in a temporary directory, the tarball's files checked (dist, README, CHANGELOG, API,
 * package.json; no sources, tests or secrets; bounded size; the repository's licence), then installed into a
 * fresh folder with viem 2.57.1 and imported from plain Node (no `window`, as server-side rendering does).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { installSite, packSiteClient, run } from '../../test/kits/site-client';

const HERE = import.meta.dirname;
const ROOT = resolve(HERE, '../..');
const tmp = mkdtempSync(join(tmpdir(), 'site-client-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('the packed site client', () => {
  const packed = packSiteClient(tmp);

  it('holds only the build, its declarations, the docs and package.json, within 64 KiB, with no secret', () => {
    const paths = packed.files.map((f) => f.path).sort();
    expect(paths.filter((p) => !/^dist\/[\w-]+\.(js|d\.ts)$/.test(p))).toEqual([
      'API.md',
      'CHANGELOG.md',
      'README.md',
      'package.json',
    ]);
    expect(paths).toEqual(expect.arrayContaining(['dist/index.js', 'dist/index.d.ts', 'dist/errors.js']));
    expect(paths.filter((p) => /test|examples|scripts|\.tgz$/.test(p))).toEqual([]);
    expect(packed.size).toBeLessThan(64 * 1024);
    const text = execFileSync('tar', ['-xOzf', packed.tarball], { encoding: 'utf8', maxBuffer: 8 << 20 });
    expect(text).not.toMatch(
      /0x[0-9a-fA-F]{64}(?![0-9a-fA-F])|PRIVATE KEY|passphrase\s*[:=]\s*['"]\w|\/work\/|\/root\//,
    );
  });

  it("carries the repository's licence and viem as a peer whose range includes the pinned 2.57.1", () => {
    const pkg = JSON.parse(readFileSync(join(HERE, 'package.json'), 'utf8')) as Record<string, unknown>;
    const root = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as Record<string, unknown>;
    expect(pkg.license).toBe(root.license ?? 'UNLICENSED');
    expect(root.dependencies).toMatchObject({ viem: '2.57.1' });
    expect(pkg.peerDependencies).toEqual({ viem: '^2.57.0' });
    expect(pkg.dependencies).toBeUndefined();
  });

  it('installs into a fresh folder and imports in plain Node: nothing throws, discovery rejects cleanly', () => {
    const site = join(tmp, 'site');
    installSite(site, packed.tarball);
    writeFileSync(
      join(site, 'ssr.mjs'),
      `import * as cs from '@countersign/site-client';
const discovery = await cs
  .discoverCountersign()
  .then(() => 'resolved', (e) => [e.name, e instanceof cs.NotInstalledError]);
const outdated = await cs
  .requireCountersign({ request: async () => ({ version: '0.0.1', methods: [] }) }, { methods: ['perps_sendCommand'] })
  .catch((e) => e.message);
console.log(JSON.stringify({ window: typeof window, exports: Object.keys(cs).sort(), discovery, outdated }));
`,
    );
    const out = JSON.parse(run(process.execPath, ['ssr.mjs'], site)) as Record<string, unknown>;
    expect(out.window).toBe('undefined');
    expect(out.exports).toEqual(
      expect.arrayContaining(['countersignActions', 'discoverCountersign', 'requireCountersign', 'toCountersignError']),
    );
    expect(out.discovery).toEqual(['Countersign.NotInstalledError', true]);
    expect(out.outdated).toBe(
      'Countersign 0.0.1 is older than this site needs: update the extension (missing: perps_sendCommand)',
    );
  }, 180_000);
});
