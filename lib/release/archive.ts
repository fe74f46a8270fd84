/**
 * Deterministic release archives: the sources zip and `SHA256SUMS` (`npm run release`, `lib/release/release.ts`).
 * Node only; never bundled into the extension.
 */
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { existsSync, lstatSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createZip } from '@aklinker1/zero-zip';

/**
 * The files the sources zip holds: every file git tracks plus every untracked file it does not ignore
 * (so a release of a working tree with uncommitted edits still rebuilds what was built), sorted by path
 * (byte order). Symlinks and deleted-but-tracked paths are left out. `root`: the repository root.
 */
export function sourceFiles(root: string): string[] {
  const out = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: root,
    encoding: 'utf8',
  });
  const paths = [...new Set(out.split('\0').filter(Boolean))];
  return paths
    .filter((p) => existsSync(join(root, p)) && lstatSync(join(root, p)).isFile())
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/**
 * Writes a zip of `files` (paths relative to `root`) to `outPath`, byte-identical for identical inputs:
 * entries in the given order, no timestamps (the zip's DOS time and date fields are 0, as WXT's own
 * zips), no permissions or extra fields, deflate level 9 (stored when deflate does not shrink a file).
 */
export async function writeZip(root: string, files: readonly string[], outPath: string): Promise<void> {
  const zip = createZip({ level: 9 });
  for (const f of files) zip.addFile(f, readFileSync(join(root, f)));
  writeFileSync(outPath, await zip.toBuffer());
}

/** SHA-256 of a file, lower-case hex. */
export const sha256File = (path: string): string => createHash('sha256').update(readFileSync(path)).digest('hex');

/**
 * Writes `SHA256SUMS` in `dir` for every other file there, in `sha256sum` format (`<hex>  <name>`, one
 * per line, names sorted), so `sha256sum -c SHA256SUMS` checks a download. Returns the text written.
 */
export function writeSha256Sums(dir: string): string {
  const names = readdirSync(dir)
    .filter((n) => n !== 'SHA256SUMS' && lstatSync(join(dir, n)).isFile())
    .sort();
  const text = names.map((n) => `${sha256File(join(dir, n))}  ${n}\n`).join('');
  writeFileSync(join(dir, 'SHA256SUMS'), text);
  return text;
}
