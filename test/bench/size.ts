/** Popup (and other extension) JS sizes, raw and gzip, from the built `.output/chrome-mv3`. */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { gzipSync } from 'node:zlib';

export function printSizes(): void {
  const out = resolve(import.meta.dirname, '../../.output/chrome-mv3');
  if (!existsSync(out)) {
    console.log('\nSizes: build the extension first (npm run build).');
    return;
  }
  const files: string[] = [];
  const walk = (d: string) => {
    for (const n of readdirSync(d)) {
      const p = join(d, n);
      if (statSync(p).isDirectory()) walk(p);
      else if (/\.(js|css)$/.test(n)) files.push(p);
    }
  };
  walk(out);
  console.log('\nBundle sizes (raw / gzip):');
  let popup = 0;
  for (const f of files.sort()) {
    const buf = readFileSync(f);
    const gz = gzipSync(buf, { level: 9 }).length;
    if (/popup/.test(f) && f.endsWith('.js')) popup += gz;
    console.log(
      `  ${f.slice(out.length + 1).padEnd(44)} ${(buf.length / 1024).toFixed(1).padStart(7)} ` +
        `KiB ${(gz / 1024).toFixed(1).padStart(7)} KiB`,
    );
  }
  console.log(`  popup JS gzip total: ${(popup / 1024).toFixed(1)} KiB (target ≤ 80 KB)`);
}
