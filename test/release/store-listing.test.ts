/**
 * Store listing material (test/store-listing): the screenshots script makes each screenshot at the
 * stores' sizes (1280 × 800 and 640 × 400) from the real extension, the committed screenshots have those
 * sizes, and the descriptions fit the stores' limits; the privacy statement names what is stored and what
 * never leaves the machine.
 */
import { describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeStoreScreenshots } from '../store-listing/screenshots';
import { ROOT } from './artifacts';

const LISTING = join(ROOT, 'test/store-listing');
/** A PNG's width and height (IHDR). */
const sizeOf = (path: string) => {
  const b = readFileSync(path);
  return `${b.readUInt32BE(16)}x${b.readUInt32BE(20)}`;
};

describe('store listing material', () => {
  it('the screenshots script makes each shot at 1280 × 800 and 640 × 400 from the running extension', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'countersign-shots-'));
    try {
      const paths = await makeStoreScreenshots(dir);
      expect(paths.length).toBe(4);
      for (const p of paths) expect(sizeOf(p)).toBe(p.match(/(\d+x\d+)\.png$/)![1]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);

  it('the committed screenshots have the stores’ sizes, one of each size per shot', () => {
    const shots = readdirSync(join(LISTING, 'screenshots')).filter((f) => f.endsWith('.png'));
    expect(shots.length).toBeGreaterThanOrEqual(2);
    for (const f of shots) expect(sizeOf(join(LISTING, 'screenshots', f))).toBe(f.match(/(\d+x\d+)\.png$/)![1]);
    const stems = new Set(shots.map((f) => f.replace(/-\d+x\d+\.png$/, '')));
    for (const s of stems)
      for (const size of ['1280x800', '640x400'])
        expect(existsSync(join(LISTING, 'screenshots', `${s}-${size}.png`))).toBe(true);
  });

  it('the short description fits Chrome’s 132 characters; the long one and the privacy statement are there', () => {
    expect(readFileSync(join(LISTING, 'short-description.txt'), 'utf8').trim().length).toBeLessThanOrEqual(132);
    expect(readFileSync(join(LISTING, 'long-description.md'), 'utf8').length).toBeGreaterThan(500);
    const privacy = readFileSync(join(LISTING, 'privacy.md'), 'utf8');
    for (const words of ['What is stored', 'What never leaves the machine', 'IndexedDB', 'private keys'])
      expect(privacy).toContain(words);
  });
});
