/** `npm run docs:examples`: rewrites lib/dapp/README.md's example blocks from examples.ts (`regions.ts`). */
import { readFileSync, writeFileSync } from 'node:fs';
import { README, regions, withExamples } from './regions';

writeFileSync(README, withExamples(readFileSync(README, 'utf8'), regions()));
