/**
 * The extension's icons rendered from `lib/release/icon.svg` with resvg — the same bytes on every machine
 * (resvg ships its own rasteriser and no fonts are used). `npm run icons` (`icons-cli.ts`) writes them to
 * `public/icon/<size>.png`; `test/release/icons.test.ts` checks the committed PNGs equal a fresh render.
 * Node only; never bundled into the extension.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Resvg } from '@resvg/resvg-js';

/** The icon sizes the manifests name (px). */
export const ICON_SIZES = [16, 32, 48, 128] as const;

/** The source SVG (absolute path). */
export const ICON_SVG = join(import.meta.dirname, 'icon.svg');

/** The icon rendered at `size` × `size` px: PNG bytes and the RGBA pixels. */
export function renderIcon(size: number): { png: Buffer; pixels: Buffer } {
  const image = new Resvg(readFileSync(ICON_SVG), {
    fitTo: { mode: 'width', value: size },
    font: { loadSystemFonts: false },
  }).render();
  return { png: image.asPng(), pixels: image.pixels };
}
