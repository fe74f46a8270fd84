/** The authority epoch's rules (`lib/authority/epoch.ts`): what each end refuses, and what it leaves alone. */
import { describe, expect, it } from 'vitest';
import {
  approvedPageScopes,
  Authority,
  AuthorityEndedError,
  endedError,
  GrantRevokedError,
  grantedPageScopes,
  KILL_SWITCH_SCOPES,
  narrowTicket,
  pageScopes,
  PERSON_SCOPES,
  SiteAuthorityEndedError,
} from './epoch';

const SITE = 'https://trade.example';
const OTHER = 'https://other.example';

describe('one authority epoch', () => {
  it('a ticket captured before an end is refused after it; one captured after it holds', () => {
    const a = new Authority();
    const before = a.capture(PERSON_SCOPES);
    a.end('all', 'lock');
    expect(() => a.assert(before)).toThrow(AuthorityEndedError);
    expect(a.endedBy(before)).toBe('lock');
    const after = a.capture(PERSON_SCOPES);
    expect(() => a.assert(after)).not.toThrow();
  });

  it('a site disconnect ends that site’s page requests only, with 4100', () => {
    const a = new Authority();
    const mine = a.capture(pageScopes(SITE));
    const theirs = a.capture(pageScopes(OTHER));
    const popup = a.capture(PERSON_SCOPES);
    a.end(`origin:${SITE}`, 'disconnect');
    expect(() => a.assert(mine)).toThrow(SiteAuthorityEndedError);
    try {
      a.assert(mine);
    } catch (e) {
      expect((e as { code?: number }).code).toBe(4100);
    }
    expect(() => a.assert(theirs)).not.toThrow();
    expect(() => a.assert(popup)).not.toThrow();
  });

  it('a trading session ends window-approved and popup requests, not granted ones nor the kill-switch renewals', () => {
    const a = new Authority();
    const start = a.capture(pageScopes(SITE));
    const approved = narrowTicket(start, approvedPageScopes(SITE));
    const granted = narrowTicket(start, grantedPageScopes(SITE), 'g1');
    const popup = a.capture(PERSON_SCOPES);
    const renewal = a.capture(KILL_SWITCH_SCOPES);
    a.end('person', 'session');
    expect(a.endedBy(approved)).toBe('session');
    expect(a.endedBy(popup)).toBe('session');
    expect(a.endedBy(granted)).toBeUndefined();
    expect(a.endedBy(renewal)).toBeUndefined();
  });

  it('an account switch ends page and popup requests, not the kill-switch renewals', () => {
    const a = new Authority();
    const page = a.capture(pageScopes(SITE));
    const renewal = a.capture(KILL_SWITCH_SCOPES);
    a.end('pages', 'account');
    a.end('person', 'account');
    expect(() => a.assert(page)).toThrow(SiteAuthorityEndedError);
    expect(a.endedBy(renewal)).toBeUndefined();
  });

  it('a revoked grant ends the requests it covers (-32003), whenever they captured, and only those', () => {
    const a = new Authority();
    const start = a.capture(pageScopes(SITE));
    a.endGrant('g1');
    const late = narrowTicket(a.capture(pageScopes(SITE)), grantedPageScopes(SITE), 'g1');
    expect(() => a.assert(narrowTicket(start, grantedPageScopes(SITE), 'g1'))).toThrow(GrantRevokedError);
    expect(() => a.assert(late)).toThrow(GrantRevokedError);
    expect(() => a.assert(narrowTicket(start, grantedPageScopes(SITE), 'g2'))).not.toThrow();
    expect(() => a.assert(narrowTicket(start, approvedPageScopes(SITE)))).not.toThrow();
  });

  it('revoking every grant ends granted requests, not window-approved ones', () => {
    const a = new Authority();
    const start = a.capture(pageScopes(SITE));
    a.end('grants', 'revoke');
    expect(a.endedBy(narrowTicket(start, grantedPageScopes(SITE), 'g1'))).toBe('revoke');
    expect(a.endedBy(narrowTicket(start, approvedPageScopes(SITE)))).toBeUndefined();
  });

  it('listeners hear every end at once, and a failing listener stops none', () => {
    const a = new Authority();
    const heard: string[] = [];
    a.onEnd(() => {
      throw new Error('listener failed');
    });
    const off = a.onEnd(() => heard.push('end'));
    a.end('all', 'venue');
    a.endGrant('g1');
    off();
    a.end('all', 'lock');
    expect(heard).toEqual(['end', 'end']);
  });

  it('a ticket is told the end that ended it, not a later end of the same scope', () => {
    const a = new Authority();
    const first = a.capture(PERSON_SCOPES);
    a.end('all', 'venue');
    const second = a.capture(PERSON_SCOPES);
    a.end('all', 'lock');
    expect(a.endedBy(first)).toBe('venue');
    expect(a.endedBy(second)).toBe('lock');
  });

  it("one mapping of what ended to the page's code, with and without a grant", () => {
    const codes = (granted: boolean) =>
      Object.fromEntries(
        (['lock', 'panic', 'session', 'venue', 'account', 'disconnect', 'revoke'] as const).map((r) => [
          r,
          (endedError(r, { granted }).constructor as { code?: number }).code,
        ]),
      );
    expect(codes(false)).toEqual({
      lock: 4900,
      panic: 4900,
      session: 4900,
      venue: 4900,
      account: 4100,
      disconnect: 4100,
      revoke: -32003,
    });
    expect(codes(true)).toEqual({
      lock: -32003,
      panic: -32003,
      session: -32003,
      venue: 4900,
      account: 4100,
      disconnect: -32003,
      revoke: -32003,
    });
    // The ticket says which: a granted ticket (it carries its grant) ended by a lock is a revoked grant.
    const a = new Authority();
    const start = a.capture(pageScopes(SITE));
    a.end('all', 'lock');
    expect(() => a.assert(narrowTicket(start, grantedPageScopes(SITE), 'g1'))).toThrow(GrantRevokedError);
    expect(() => a.assert(narrowTicket(start, approvedPageScopes(SITE)))).toThrow(AuthorityEndedError);
  });
});
