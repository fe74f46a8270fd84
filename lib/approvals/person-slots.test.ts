/**
 * The approval windows are shared: sites may fill the pending list up to its total, but the person's own
 * requests (origin `extension`: a deposit-wallet batch the popup asks for) always find a slot.
 */
import { describe, expect, it } from 'vitest';
import { ApprovalRegistry, MAX_PENDING_PER_ORIGIN, MAX_PENDING_TOTAL, PERSON_PENDING_SLOTS } from './registry';

const view = (origin: string) => ({ origin, kind: 'connect' as const, title: 'Connect', lines: [], flags: [], signer: null, digest: `0x${'11'.repeat(32)}` as const, account: null });

describe('pending approvals: the person\'s reserve', () => {
  it('sites on many origins fill every site slot; the person\'s own request still opens, and sites get no more', () => {
    const r = new ApprovalRegistry({ setTimer: () => 0, clearTimer: () => undefined });
    const sites = Array.from({ length: Math.ceil(MAX_PENDING_TOTAL / MAX_PENDING_PER_ORIGIN) + 1 }, (_, i) => `https://s${i}.attacker.example`);
    let opened = 0;
    for (const o of sites) for (let k = 0; k < MAX_PENDING_PER_ORIGIN; k++) {
      try {
        r.add(view(o), 60_000).approved.catch(() => undefined);
        opened++;
      } catch {
        // refused: the site slots are full
      }
    }
    expect(opened).toBe(MAX_PENDING_TOTAL);
    expect(() => r.checkCapacity('extension')).not.toThrow();
    for (let k = 0; k < PERSON_PENDING_SLOTS; k++) r.add(view('extension'), 60_000).approved.catch(() => undefined);
    expect(r.size).toBe(MAX_PENDING_TOTAL + PERSON_PENDING_SLOTS);
    expect(() => r.add(view('https://late.attacker.example'), 60_000)).toThrow();
  });
});
