/**
 * `npm run icons`: writes the toolbar and store icons `public/icon/<size>.png` (16, 32, 48, 128 px),
 * each the render of `lib/release/icon.svg` (`icons.ts`). The PNGs are committed.
 */
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ICON_SIZES, renderIcon } from './icons';

const ROOT = resolve(import.meta.dirname, '../..');
for (const size of ICON_SIZES) writeFileSync(join(ROOT, 'public/icon', `${size}.png`), renderIcon(size).png);
console.log(`wrote public/icon/{${ICON_SIZES.join(',')}}.png`);
