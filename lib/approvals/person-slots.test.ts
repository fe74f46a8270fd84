/**
 * The approval windows are shared: sites may fill the pending list up to its total, but the person's own
 * requests (origin `extension`: a deposit-wallet batch the popup asks for) always find a slot.
 */
import { describe, expect, it } from 'vitest';
import { ApprovalRegistry, MAX_PENDING_TOTAL } from './registry';

/**
 * Slots kept for the person's own requests (README "Standing permissions (grants)": "2 more are kept for your own
 * requests").
 */
const PERSON_SLOTS = 2;

const view = (origin: string) => ({
  origin,
  kind: 'connect' as const,
  title: 'Connect',
  lines: [],
  flags: [],
  signer: null,
  digest: `0x${'11'.repeat(32)}` as const,
  account: null,
});

describe("pending approvals: the person's reserve", () => {
  it("sites on many origins fill every site slot; the person's own request still opens, and sites get no more", () => {
    const r = new ApprovalRegistry({ setTimer: () => 0, clearTimer: () => undefined });
    // Each origin adds requests until it is refused (its own limit, or all sites' slots are full).
    let opened = 0;
    for (let i = 0; i < MAX_PENDING_TOTAL + 1; i++) {
      for (;;) {
        try {
          r.add(view(`https://s${i}.attacker.example`), 60_000).approved.catch(() => undefined);
          opened++;
        } catch {
          break;
        }
      }
    }
    expect(opened).toBe(MAX_PENDING_TOTAL);
    expect(() => r.checkCapacity('extension')).not.toThrow();
    for (let k = 0; k < PERSON_SLOTS; k++) r.add(view('extension'), 60_000).approved.catch(() => undefined);
    expect(r.size).toBe(MAX_PENDING_TOTAL + PERSON_SLOTS);
    expect(() => r.add(view('https://late.attacker.example'), 60_000)).toThrow();
  });
});

describe("pending approvals: the person's own request is shown first", () => {
  it("sites that filled their slots before the person asked do not stand in front of the person's own request", () => {
    const r = new ApprovalRegistry({ setTimer: () => 0, clearTimer: () => undefined });
    for (let i = 0; i < 4; i++)
      for (let k = 0; k < 5; k++) r.add(view(`https://s${i}.attacker.example`), 60_000).approved.catch(() => undefined);
    r.add(view('extension'), 60_000).approved.catch(() => undefined);
    // The window shows the head of this list: the person's own request, then the sites' in their order.
    const list = r.list();
    expect(list[0]!.origin).toBe('extension');
    expect(list.slice(1).map((v) => v.origin)).toEqual(
      Array.from({ length: 20 }, (_, j) => `https://s${Math.floor(j / 5)}.attacker.example`),
    );
  });
});
