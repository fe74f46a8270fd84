/**
 * The send point's choice of transport and its answers, pure:
 * a fake session and a fake fetch record what each transport carried.
 */
import { describe, expect, it } from 'vitest';
import { NetworkError } from '../http/json';
import type { SessionCommand, SessionCommandOutcome } from '../streams/perps';
import { cancelOrders, commandFromBody, type PerpsCommand } from './commands';
import type { PerpsEnvelope } from './envelope';
import { PerpsGatewayError, PerpsRateLimitedError } from './errors';
import { submitPerpsCommand, type PerpsSessionTransport } from './transport';

const PROXY = '0x00000000000000000000000000000000000000aa';
const SIG = `0x${'11'.repeat(65)}` as const;
const order = commandFromBody({
  type: 'createOrders',
  args: [{ iid: 2, buy: true, qty: '0.01', p: '3000', tif: 'gtc', po: true, c: 'ab'.repeat(16) }],
});
const envelopeOf = (c: PerpsCommand): PerpsEnvelope => ({ op: c.body, sig: SIG, salt: 7, ts: 1_700_000_000_000 });

/** A session answering `outcome`, recording what it was asked to send. */
function session(outcome: SessionCommandOutcome, proxy = PROXY) {
  const sent: SessionCommand[] = [];
  const s: PerpsSessionTransport = { proxy, command: async (cmd) => (sent.push(cmd), outcome) };
  return { s, sent };
}
/** A fetch answering `status` / `body`, recording its calls. */
function rest(status = 200, body: unknown = [{ status: 'ok', oid: 1 }]) {
  const calls: string[] = [];
  const fetchFn: typeof fetch = async (url) => (
    calls.push(String(url)),
    new Response(JSON.stringify(body), { status })
  );
  return { fetchFn, calls };
}
const submit = (
  command: PerpsCommand,
  s: PerpsSessionTransport | undefined,
  fetchFn: typeof fetch,
  signerAddress = PROXY,
) =>
  submitPerpsCommand({
    perpsUrl: 'http://venue.test/perps',
    command,
    envelope: envelopeOf(command),
    signerAddress,
    fetchFn,
    timeoutMs: 1_000,
    session: s,
  });

describe('submitPerpsCommand', () => {
  it(
    'sends an order over a live session with the same ' + 'envelope and returns its answer; REST carries nothing',
    async () => {
      const { s, sent } = session({ kind: 'answer', data: [{ status: 'ok', oid: 9 }] });
      const r = rest();
      expect(await submit(order, s, r.fetchFn)).toEqual([{ status: 'ok', oid: 9 }]);
      expect(sent).toEqual([envelopeOf(order)]);
      expect(r.calls).toEqual([]);
    },
  );

  it('a session that did not send (not live) falls back to REST', async () => {
    const { s, sent } = session({ kind: 'not_sent' });
    const r = rest();
    expect(await submit(order, s, r.fetchFn)).toEqual([{ status: 'ok', oid: 1 }]);
    expect(sent).toHaveLength(1);
    expect(r.calls).toEqual(['http://venue.test/perps/v1/trade/orders']);
  });

  it(
    'a session that sent and got no answer throws NetworkError ' + '(outcome unknown) and never resends over REST',
    async () => {
      for (const reason of ['closed', 'timeout'] as const) {
        const { s } = session({ kind: 'no_answer', reason });
        const r = rest();
        await expect(submit(order, s, r.fetchFn)).rejects.toBeInstanceOf(NetworkError);
        expect(r.calls).toEqual([]);
      }
    },
  );

  it('maps a refusal to the same typed error as REST: a refusal, rate limiting, a bad signature', async () => {
    const cases: [string, number][] = [
      ['insufficient_margin', 400],
      ['rate_limited', 429],
      ['invalid_signature', 401],
    ];
    for (const [error, status] of cases) {
      const overSession = await submit(
        order,
        session({ kind: 'answer', data: { status: 'err', error } }).s,
        rest().fetchFn,
      ).catch((e: unknown) => e);
      const overRest = await submit(order, undefined, rest(status, { status: 'err', error }).fetchFn).catch(
        (e: unknown) => e,
      );
      expect(overSession).toBeInstanceOf(PerpsGatewayError);
      expect(overSession?.constructor).toBe(overRest?.constructor);
      expect((overSession as PerpsGatewayError).shortMessage).toBe((overRest as PerpsGatewayError).shortMessage);
    }
    const limited = await submit(
      order,
      session({ kind: 'answer', data: { status: 'err', error: 'rate_limited' } }).s,
      rest().fetchFn,
    ).catch((e: unknown) => e);
    expect(limited).toBeInstanceOf(PerpsRateLimitedError);
  });

  it('keeps REST for what the official client sends over REST, and for a command another proxy signed', async () => {
    const other = commandFromBody({ type: 'cancelAll', args: {} });
    for (const [command, signer] of [
      [other, PROXY],
      [cancelOrders({ oids: [1] }), '0x00000000000000000000000000000000000000bb'],
    ] as const) {
      const { s, sent } = session({ kind: 'answer', data: [] });
      const r = rest(200, { status: 'ok' });
      await submit(command, s, r.fetchFn, signer);
      expect(sent).toEqual([]);
      expect(r.calls).toHaveLength(1);
    }
  });
});
