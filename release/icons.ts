/**
 * `npm run icons`: renders `release/icon.svg` to the toolbar and store icons `public/icon/<size>.png`
 * (16, 32, 48, 128 px) with resvg — the same bytes on every machine (resvg ships its own rasteriser and
 * no fonts are used). `test/release/icons.test.ts` checks the committed PNGs equal a fresh render.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Resvg } from '@resvg/resvg-js';

/** The icon sizes the manifests name (px). */
export const ICON_SIZES = [16, 32, 48, 128] as const;

const ROOT = resolve(import.meta.dirname, '..');
/** The source SVG. */
export const ICON_SVG = join(ROOT, 'release/icon.svg');

/** The icon rendered at `size` × `size` px: PNG bytes and the RGBA pixels. */
export function renderIcon(size: number): { png: Buffer; pixels: Buffer } {
  const image = new Resvg(readFileSync(ICON_SVG), { fitTo: { mode: 'width', value: size }, font: { loadSystemFonts: false } }).render();
  return { png: image.asPng(), pixels: image.pixels };
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  for (const size of ICON_SIZES) writeFileSync(join(ROOT, 'public/icon', `${size}.png`), renderIcon(size).png);
  console.log(`wrote public/icon/{${ICON_SIZES.join(',')}}.png`);
}
