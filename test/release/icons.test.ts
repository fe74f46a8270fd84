/**
 * The extension's icons: the committed `public/icon/<size>.png` are a fresh render of `lib/release/icon.svg`
 * at each size the manifests name, and the tile reads on light and dark toolbars (WCAG contrast ≥ 3:1 for the tile
 * against #ffffff and #202124, and for the white mark against the tile).
 */
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ICON_SIZES, renderIcon } from '../../lib/release/icons';
import { ROOT } from './artifacts';

/** WCAG relative luminance of an sRGB colour (0-255 channels). */
function luminance([r, g, b]: readonly number[]): number {
  const lin = (c: number) => (c / 255 <= 0.03928 ? c / 255 / 12.92 : ((c / 255 + 0.055) / 1.055) ** 2.4);
  return 0.2126 * lin(r!) + 0.7152 * lin(g!) + 0.0722 * lin(b!);
}
/** WCAG contrast ratio of two colours. */
const contrast = (a: readonly number[], b: readonly number[]) => {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (hi! + 0.05) / (lo! + 0.05);
};

describe('icons', () => {
  it('public/icon/<size>.png is the render of lib/release/icon.svg at 16, 32, 48 and 128 px', () => {
    for (const size of ICON_SIZES) {
      const committed = readFileSync(join(ROOT, 'public/icon', `${size}.png`));
      expect(committed.readUInt32BE(16), `${size}.png width`).toBe(size);
      expect(committed.readUInt32BE(20), `${size}.png height`).toBe(size);
      expect(committed.equals(renderIcon(size).png), `${size}.png is stale: npm run icons`).toBe(true);
    }
  });

  it('the tile contrasts with light and dark toolbars, and the mark with the tile', () => {
    const { pixels } = renderIcon(128);
    const at = (x: number, y: number) => [...pixels.subarray((y * 128 + x) * 4, (y * 128 + x) * 4 + 4)];
    const tile = at(12, 64);
    expect(tile[3]).toBe(255);
    expect(contrast(tile, [255, 255, 255])).toBeGreaterThanOrEqual(3);
    expect(contrast(tile, [0x20, 0x21, 0x24])).toBeGreaterThanOrEqual(3);
    expect(contrast(at(64, 104), tile)).toBeGreaterThanOrEqual(3); // the signature line
  });
});
