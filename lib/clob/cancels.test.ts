import { describe, expect, it } from 'vitest';
import { ClobCancelLog } from './cancels';

describe('the order-book cancels Countersign sent', () => {
  it(
    'covers the ids of DELETE /order and /orders, everything ' +
      'after /cancel-all, nothing after other requests, for 2 minutes',
    () => {
      const clock = { now: 0 };
      const log = new ClobCancelLog(() => clock.now);
      log.record('POST', '/order', { order: {} });
      log.record('DELETE', '/order', JSON.stringify({ orderID: '0xa' }));
      log.record('DELETE', '/orders', ['0xb', '0xc']);
      expect(['0xa', '0xb', '0xc', '0xd'].map((id) => log.covers(id))).toEqual([true, true, true, false]);
      clock.now = 120_001;
      expect(log.covers('0xa')).toBe(false);
      log.record('DELETE', '/cancel-all', undefined);
      expect(log.covers('0xd')).toBe(true);
    },
  );
});
