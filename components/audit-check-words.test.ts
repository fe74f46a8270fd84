import { describe, expect, it } from 'vitest';
import { verifiedText } from './AuditCheckBanner';

describe('verifiedText', () => {
  it('after the tab’s check alone, claims the ends and the new entries, not that nothing older was removed', () => {
    const t = verifiedText({ count: 1_000_000, checked: 12 });
    expect(t).toBe(
      'Chain verified: 1,000,000 entries (both ends, and 12 new since the last ' +
        'check). “Check everything” also finds an older entry removed or changed.',
    );
    expect(t).not.toMatch(/none removed/);
  });
  it('after a full check, says no entry was removed or changed as of when it ran', () => {
    expect(
      verifiedText({ count: 5, checked: 0, fullAt: Date.UTC(2026, 10, 28, 0, 30), since: Date.UTC(2026, 10, 1) }),
    ).toBe(
      'Chain verified: 5 entries, none removed or changed (every entry checked ' +
        '2026-11-28 00:30 UTC, 0 new checked since; sealed since 2026-11-01).',
    );
  });
});
