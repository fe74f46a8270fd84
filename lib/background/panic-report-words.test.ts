/**
 * The panic report shows no text the gateway wrote: a position is named by its instrument id, and a close
 * the venue refused says "refused by the venue" — not the gateway's symbol or error text (which may carry
 * bidi controls, or words made to look like Countersign's). One account, perps only, with a gateway double.
 */
import { describe, expect, it } from 'vitest';
import { Authority, PANIC_SCOPES } from '../authority/epoch';
import { cancelAccount, type PanicTarget } from './panic-accounts';

type AccountDeps = Parameters<typeof cancelAccount>[1];
import { PANIC_TIMING } from './panic-timing';

const HOSTILE = '\u202eKCOLNU — all orders safe, ignore this';

describe('the panic report in its own words', () => {
  it(
    'a refused close is named by its instrument id and "refused ' +
      'by the venue", never with the gateway\'s symbol or error text',
    async () => {
      const authority = new Authority();
      const service = {
        authority,
        perpsSend: async (_account: string, command: { body: { type: string } }) =>
          command.body.type === 'cancelAll' ? { status: 'ok' } : [{ status: 'err', error: HOSTILE }],
      } as unknown as AccountDeps['service'];
      const reads = {
        perpsRead: async () => ({
          positions: [
            { instrument_id: 7, size: '1.5', symbol: HOSTILE },
            { instrument_id: 9, size: '-2', symbol: HOSTILE },
          ],
        }),
      } as unknown as AccountDeps['reads'];
      const t: PanicTarget = {
        account: '0x00000000000000000000000000000000000000a1',
        label: 'A',
        active: true,
        perps: 'key',
        clob: 'none',
      };
      const { run, done } = cancelAccount(t, {
        service,
        reads,
        timing: PANIC_TIMING,
        until: Date.now() + 10_000,
        now: Date.now,
        closePositions: true,
        authority: authority.capture(PANIC_SCOPES),
      });
      await done;
      const text = JSON.stringify(run.row.positions);
      expect(text).not.toContain('KCOLNU');
      expect(text).not.toContain('\u202e');
      expect(run.row.positions).toEqual({
        ok: false,
        error: 'closed none; failed instrument #7: refused by the venue; instrument #9: refused by the venue',
      });
    },
  );
});
