/**
 * Store rules on the release zips: Mozilla's `addons-linter` finds no error and no warning but the
 * `innerHTML` ones inside bundled library code that lib/release/README.md names; Firefox declares that it
 * collects no data; no code is fetched or evaluated at run time; a release holds no loopback access; and
 * lib/release/README.md's permission table names exactly the manifests' permissions.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync, rmSync } from 'node:fs';
import { join, relative } from 'node:path';
import { ROOT, artifact, ensureRelease, unzipFresh } from './artifacts';

type Manifest = {
  permissions?: string[];
  host_permissions?: string[];
  optional_host_permissions?: string[];
  content_scripts?: { matches?: string[] }[];
  content_security_policy?: { extension_pages?: string };
  browser_specific_settings?: { gecko?: { data_collection_permissions?: { required?: string[] } } };
};
type LintMessage = { code: string; file?: string; line?: number; column?: number; message: string };

let chrome: string;
let firefox: string;
const manifestOf = (dir: string): Manifest => JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as Manifest;
const releaseReadme = () => readFileSync(join(ROOT, 'lib/release/README.md'), 'utf8');

/** Every file under `dir` (relative paths). */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => relative(dir, join(e.parentPath, e.name)));
}

/** The non-test source files that are bundled into the extension (lib/sandbox and lib/release are Node-only). */
function bundledSources(): string[] {
  return ['lib', 'components', 'entrypoints']
    .flatMap((d) => filesUnder(join(ROOT, d)).map((f) => join(d, f)))
    .filter(
      (f) =>
        /\.(ts|tsx)$/.test(f) &&
        !/\.test\.tsx?$/.test(f) &&
        !f.startsWith('lib/sandbox/') &&
        !f.startsWith('lib/release/'),
    );
}

beforeAll(() => {
  ensureRelease();
  chrome = unzipFresh(artifact('chrome'), 'countersign-chrome-');
  firefox = unzipFresh(artifact('firefox'), 'countersign-firefox-');
}, 300_000);
afterAll(() => {
  for (const d of [chrome, firefox]) if (d) rmSync(d, { recursive: true, force: true });
});

describe('store rules on the release zips', () => {
  it(
    'addons-linter on the Firefox zip: no error, and warnings only ' +
      'for innerHTML inside Preact, each named in lib/release/README.md',
    () => {
      let out: string;
      try {
        out = execFileSync('npx', ['addons-linter', '--output', 'json', artifact('firefox')], {
          cwd: ROOT,
          encoding: 'utf8',
          timeout: 120_000,
          stdio: ['ignore', 'pipe', 'ignore'],
        });
      } catch (err) {
        out = String((err as { stdout?: string }).stdout ?? ''); // exits non-zero on errors; the report says which
      }
      const report = JSON.parse(out) as { errors: LintMessage[]; warnings: LintMessage[]; notices: LintMessage[] };
      expect(report.errors).toEqual([]);
      const readme = releaseReadme();
      for (const w of report.warnings) {
        expect(`${w.code} ${w.message}`).toMatch(/^UNSAFE_VAR_ASSIGNMENT .*innerHTML/);
        expect(readme).toContain(`\`${w.code}\` (\`innerHTML\`)`);
        // The assignment is Preact's `dangerouslySetInnerHTML` path (`…innerHTML=<x>.__html`), bundled library code.
        const line = readFileSync(join(firefox, w.file!), 'utf8').split('\n')[(w.line ?? 1) - 1] ?? '';
        expect(line.slice(Math.max(0, (w.column ?? 0) - 40), (w.column ?? 0) + 60)).toMatch(/innerHTML=\w+\.__html/);
      }
    },
    150_000,
  );

  it('no bundled source sets HTML from a string (so the innerHTML path in Preact is never taken)', () => {
    const hits = bundledSources().filter((f) =>
      /dangerouslySetInnerHTML|\.innerHTML\s*=|outerHTML|insertAdjacentHTML/.test(readFileSync(join(ROOT, f), 'utf8')),
    );
    expect(hits).toEqual([]);
  });

  it('Firefox declares that no data is collected', () => {
    expect(manifestOf(firefox).browser_specific_settings?.gecko?.data_collection_permissions).toEqual({
      required: ['none'],
    });
  });

  it('no remote code: scripts only from the package, no eval, no Function constructor, no remote import', () => {
    for (const dir of [chrome, firefox]) {
      expect(manifestOf(dir).content_security_policy?.extension_pages).toMatch(/^script-src 'self';/);
      const js = filesUnder(dir).filter((f) => /\.(js|html)$/.test(f));
      const offenders = js.filter((f) =>
        /\beval\(|new Function\(|importScripts\(|import\(\s*["'`]https?:|<script[^>]+src=["']https?:/.test(
          readFileSync(join(dir, f), 'utf8'),
        ),
      );
      expect(offenders).toEqual([]);
    }
  });

  it(
    'a release holds no loopback access, even optional: no host permission ' +
      'at install, https hosts only on request, provider only on https pages',
    () => {
      for (const dir of [chrome, firefox]) {
        const m = manifestOf(dir);
        expect(m.host_permissions ?? []).toEqual([]);
        expect(m.optional_host_permissions).toEqual(['https://*/*']);
        expect(m.content_scripts?.flatMap((c) => c.matches ?? [])).toEqual(['https://*/*', 'https://*/*']);
      }
    },
  );

  it("lib/release/README.md's permission table names exactly the manifests' permissions and host permissions", () => {
    const readme = releaseReadme();
    const table = readme.slice(readme.indexOf('## Permissions'), readme.indexOf('## Store rules'));
    const named = new Set(
      [...table.matchAll(/^\| ([^|]+)\|/gm)].flatMap((r) => [...r[1]!.matchAll(/`([^`]+)`/g)].map((x) => x[1]!)),
    );
    const inManifests = new Set(
      [chrome, firefox].flatMap((d) => {
        const m = manifestOf(d);
        return [
          ...(m.permissions ?? []),
          ...(m.host_permissions ?? []),
          ...(m.optional_host_permissions ?? []),
          ...(m.content_scripts ?? []).flatMap((c) => c.matches ?? []),
        ];
      }),
    );
    expect([...inManifests].filter((p) => !named.has(p))).toEqual([]);
    expect([...named].filter((p) => !inManifests.has(p))).toEqual([]);
  });
});
