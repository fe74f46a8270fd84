/** API.md is the reference `apiReference` generates from the package's doc comments (`npm run docs:api`). */
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { API_MD, apiReference } from './api';

describe('the API reference', () => {
  it('equals what the doc comments generate, and names every export the README quick start uses', () => {
    const md = readFileSync(API_MD, 'utf8');
    expect(md).toBe(apiReference());
    for (const name of ['discoverCountersign', 'countersignActions', 'requireCountersign', 'ExtensionOutdatedError'])
      expect(md).toContain(`### \`${name}\``);
  });
});
