import { describe, expect, it } from 'vitest';
import { deadManText } from './DeadManStatus';

describe('deadManText', () => {
  it('says how long is left before perps orders cancel', () => {
    expect(deadManText({ venue: 'perps', account: '0xA', armed: true, perpsCancelAt: 61_000 }, 1_000)).toMatch(
      /^Dead-man timer \(perps\) armed: orders cancel at .* unless renewed \(60 s left\)\.$/,
    );
  });
  it('says when the order book was last told, and a failed renewal', () => {
    expect(
      deadManText({ venue: 'clob', account: '0xA', armed: false, lastHeartbeat: 0, error: 'timeout' }, 5_000),
    ).toBe(
      'Dead-man timer (order book) NOT armed — granted requests ' +
        'ask: last heartbeat not yet. Last renewal failed: timeout',
    );
    expect(deadManText({ venue: 'clob', account: '0xA', armed: true, lastHeartbeat: 1_000 }, 5_000)).toBe(
      'Dead-man timer (order book) armed: last heartbeat 4 s ago.',
    );
  });
});
