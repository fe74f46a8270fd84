/** `npm run docs:methods`: rewrites the methods table of lib/dapp/README.md from the records (`docs.ts`). */
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { withMethodsTable } from './docs';
import { PAGE_METHODS } from './index';

const README = resolve(import.meta.dirname, '../../dapp/README.md');
writeFileSync(README, withMethodsTable(readFileSync(README, 'utf8'), PAGE_METHODS));
