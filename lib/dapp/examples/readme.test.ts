/**
 * lib/dapp/README.md shows every example region of examples.ts verbatim (so the page cannot drift from
 * the code the browser test runs); its methods table is held to the records by `lib/page/methods/methods.test.ts`.
 */
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { README, regions, withExamples } from './regions';

describe('site developers README', () => {
  it(
    'each example block equals its region in examples.ts, and ' +
      'every region is shown (npm run docs:examples rewrites them)',
    () => {
      const readme = readFileSync(README, 'utf8');
      const regs = regions();
      expect(readme).toBe(withExamples(readme, regs));
      const shown = [...readme.matchAll(/<!-- example: (\S+) -->/g)].map((m) => m[1]);
      expect([...regs.keys()].filter((r) => !shown.includes(r))).toEqual([]);
    },
  );
});
