/** The person's origins can never be a page's: every one is refused as a page origin before anything else. */
import { describe, expect, it } from 'vitest';
import { isPersonOrigin } from './person';

describe("the person's origins", () => {
  it('none of them is an origin a page request is served from, and no page origin is one of them', () => {
    // Page origins are URL origins (`isAllowedOrigin` parses them); none of the person's words is one.
    for (const o of ['extension', 'dead-man', 'panic']) {
      expect(isPersonOrigin(o), o).toBe(true);
      expect(() => new URL(o), o).toThrow();
    }
    for (const page of ['https://extension', 'http://localhost', 'https://panic.example', 'https://trade.example'])
      expect(isPersonOrigin(page), page).toBe(false);
  });
});
