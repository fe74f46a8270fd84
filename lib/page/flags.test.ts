import { describe, expect, it } from 'vitest';
import type { Address } from 'viem';
import { commandFromBody } from '../perps/commands';
import { perpsFlags } from './flags';

const ACCOUNT = '0x00000000000000000000000000000000000000a1' as Address;
type Deps = Parameters<typeof perpsFlags>[0];

/**
 * Venue reads where the portfolio answers only once a book was asked (and a book only once the portfolio
 * was asked): reads made one after the other never finish. Counts the book reads per instrument.
 */
function readsAnsweredTogether(positions: { instrument_id: number; size: string }[]) {
  const bookReads = new Map<number, number>();
  let bookAsked!: () => void;
  let portfolioAsked!: () => void;
  const book = new Promise<void>((r) => (bookAsked = r));
  const portfolio = new Promise<void>((r) => (portfolioAsked = r));
  const d = {
    db: {},
    service: {
      reads: {
        perpsRead: async (_account: string, name: string) => {
          if (name !== 'portfolio') throw new Error(`unexpected read ${name}`);
          portfolioAsked();
          await book;
          return { positions };
        },
        perpsBook: async (iid: number) => {
          bookReads.set(iid, (bookReads.get(iid) ?? 0) + 1);
          bookAsked();
          await portfolio;
          return { bids: [['3000', '1']], asks: [['3001', '1']] };
        },
      },
    },
  } as unknown as Deps;
  return { d, bookReads };
}

const within = <T>(p: Promise<T>, ms = 2_000) =>
  Promise.race([
    p,
    new Promise<never>((_, no) =>
      setTimeout(() => no(new Error('the flags waited for one read before asking the other')), ms),
    ),
  ]);

describe("a page order's window flags", () => {
  it("ask the portfolio and the books together, read each instrument's book once, and keep their order", async () => {
    const { d, bookReads } = readsAnsweredTogether([{ instrument_id: 2, size: '-1' }]);
    const cmd = commandFromBody({
      type: 'createOrders',
      args: [
        { iid: 2, buy: true, qty: '2', p: '3200', tif: 'gtc' },
        { iid: 2, buy: true, qty: '0.5', p: '3000', tif: 'gtc' },
      ],
    });
    const flags = await within(perpsFlags(d, ACCOUNT, cmd));
    expect(flags).toEqual([
      'A batch of 2 orders.',
      'The price 3,200 is more than 5% through the book (best ask 3001).',
      'Reduce-only is off and this order flips your position.',
    ]);
    expect([...bookReads]).toEqual([[2, 1]]);
  });
});
