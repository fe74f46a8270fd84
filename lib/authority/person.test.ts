/** The person's origins can never be a page's: every one is refused as a page origin before anything else. */
import { describe, expect, it } from 'vitest';
import { isAllowedOrigin } from '../provider/service';
import { isPersonOrigin, PERSON_ORIGINS } from './person';

describe("the person's origins", () => {
  it('none of them is an origin a page request is served from, and no page origin is one of them', () => {
    for (const o of PERSON_ORIGINS) expect(isAllowedOrigin(o), o).toBe(false);
    for (const page of ['https://extension', 'http://localhost', 'https://panic.example', 'https://trade.example']) expect(isPersonOrigin(page), page).toBe(false);
  });
});
