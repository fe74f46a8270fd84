/**
 * The typed dapp client over a fake EIP-1193 transport: what each action sends, that it is
 * never retried, and the typed errors a dapp receives for each of Countersign's answers.
 */
import { describe, expect, it } from 'vitest';
import { createWalletClient, custom } from 'viem';
import { ProviderRpcError } from '../errors/rpc';
import {
  BusyError,
  countersignActions,
  InvalidRequestError,
  LockedError,
  NotConnectedError,
  OutcomeUnknownError,
  toCountersignError,
  UnsupportedError,
  UserRejectedError,
  VenueRefusedError,
  CountersignError,
  type GrantPermissionsParameters,
} from './index';

/** A wallet client over a fake provider that records every request and answers with `answer`. */
function fake(answer: (method: string, params: unknown) => unknown) {
  const sent: { method: string; params: unknown }[] = [];
  const provider = {
    request: async ({ method, params }: { method: string; params?: unknown }) => {
      sent.push({ method, params });
      return answer(method, params);
    },
  };
  const client = createWalletClient({ transport: custom(provider) }).extend(countersignActions);
  return { client, sent };
}
const fail = (code: number, message: string, data?: Record<string, string | number | boolean>) => () => {
  throw new ProviderRpcError(code, message, data);
};

describe('countersignActions', () => {
  it('sends each product method with its params in a one-element array and returns the answer', async () => {
    const { client, sent } = fake((m) =>
      m === 'perps_sendCommand'
        ? [{ status: 'ok', oid: 7, coid: 'ab'.repeat(16) }]
        : m === 'wallet_getPermissions'
          ? []
          : null,
    );
    const ack = await client.perpsSendCommand({
      op: {
        type: 'createOrders',
        args: [{ iid: 2, buy: true, qty: '0.5', p: '3000', tif: 'gtc', po: true, c: 'ab'.repeat(16) }],
      },
    });
    expect(ack).toEqual([{ status: 'ok', oid: 7, coid: 'ab'.repeat(16) }]);
    await client.clobPostOrders({
      orders: [{ tokenId: '1', side: 'BUY', price: '0.4', size: '10', orderType: 'GTC' }],
      idempotencyKey: 'k-1',
    });
    await client.clobSignRequest({ method: 'GET', requestPath: '/data/orders' });
    await client.getCountersignPermissions();
    await client.revokeCountersign();
    expect(sent.map((s) => s.method)).toEqual([
      'perps_sendCommand',
      'clob_postOrders',
      'clob_signRequest',
      'wallet_getPermissions',
      'wallet_revokePermissions',
    ]);
    expect(sent[1]!.params).toEqual([
      { orders: [{ tokenId: '1', side: 'BUY', price: '0.4', size: '10', orderType: 'GTC' }], idempotencyKey: 'k-1' },
    ]);
    expect(sent[4]!.params).toEqual([{ eth_accounts: {} }]);
  });

  it(
    'grantPermissions sends one ERC-7715 countersign-grant ' + 'permission with a wallet signer and returns the answer',
    async () => {
      const limits: GrantPermissionsParameters['limits'] = {
        venue: 'perps',
        instruments: [1],
        allow: { order: true },
        maxNotional: '100',
        dailyNotional: '1000',
        priceBandPct: '2',
      };
      const answer = {
        expiry: 1_900_000_000,
        grantedPermissions: [{ type: 'countersign-grant', data: { ...limits, slippagePct: '1' }, policies: [] }],
        permissionsContext: 'grant-id',
      };
      const { client, sent } = fake(() => answer);
      expect(await client.grantPermissions({ limits, expiry: 1_900_000_000 })).toEqual(answer);
      expect(sent[0]).toEqual({
        method: 'wallet_grantPermissions',
        params: [
          {
            expiry: 1_900_000_000,
            signer: { type: 'wallet' },
            permissions: [{ type: 'countersign-grant', data: limits, policies: [] }],
          },
        ],
      });
    },
  );

  it('never retries, even an error viem would retry (-32603): one request, one typed error', async () => {
    for (const code of [-32603, -32005, -32002, -32003, 4001]) {
      const { client, sent } = fake(fail(code, 'no'));
      await expect(client.perpsSendCommand({ op: { type: 'cancelOrders', args: [1] } })).rejects.toBeInstanceOf(
        CountersignError,
      );
      expect(sent, String(code)).toHaveLength(1);
    }
  });
});

describe('toCountersignError', () => {
  const cases: [string, () => unknown, new (...a: never[]) => CountersignError, number][] = [
    ['4001 rejected', fail(4001, 'The request was rejected.'), UserRejectedError, 4001],
    ['4100 not connected', fail(4100, 'Not connected.'), NotConnectedError, 4100],
    ['4200 unsupported', fail(4200, 'No.'), UnsupportedError, 4200],
    ['4900 locked', fail(4900, 'Locked.', { retryable: true }), LockedError, 4900],
    ['-32602 invalid params', fail(-32602, 'params.op.args[0].qty must be a decimal'), InvalidRequestError, -32602],
    ['-32002 busy', fail(-32002, 'This site already has 5 requests waiting for approval.'), BusyError, -32002],
    [
      '-32002 unknown outcome',
      fail(-32002, 'No answer from the gateway.', {
        command: 'createOrders',
        coids: `${'a'.repeat(32)},${'b'.repeat(32)}`,
      }),
      OutcomeUnknownError,
      -32002,
    ],
    ['-32003 venue refused', fail(-32003, 'Insufficient margin for this command.'), VenueRefusedError, -32003],
  ];
  it.each(cases)(
    '%s through viem → its typed class with the provider message and data',
    async (_name, thrower, cls, code) => {
      const { client } = fake(thrower);
      const err = await client.perpsSendCommand({ op: { type: 'cancelOrders', args: [1] } }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(cls);
      expect((err as CountersignError).rpcCode).toBe(code);
    },
  );

  it(
    'an unknown outcome names its client order ids and ' + 'order hashes; a locked error says whether to retry',
    async () => {
      const e = toCountersignError(
        new ProviderRpcError(-32002, 'No answer.', {
          command: 'createOrders',
          coids: `${'a'.repeat(32)},${'b'.repeat(32)}`,
        }),
      );
      expect(e).toBeInstanceOf(OutcomeUnknownError);
      expect((e as OutcomeUnknownError).coids).toEqual(['a'.repeat(32), 'b'.repeat(32)]);
      expect((e as OutcomeUnknownError).command).toBe('createOrders');
      const clob = toCountersignError(
        new ProviderRpcError(-32002, 'No answer.', { command: 'postOrders', orderHashes: `0x${'1'.repeat(64)}` }),
      );
      expect((clob as OutcomeUnknownError).orderHashes).toEqual([`0x${'1'.repeat(64)}`]);
      expect(
        (toCountersignError(new ProviderRpcError(4900, 'Restarted.', { retryable: true })) as LockedError).retryable,
      ).toBe(true);
      expect((toCountersignError(new ProviderRpcError(4900, 'Locked.')) as LockedError).retryable).toBe(false);
    },
  );

  it("keeps the provider message (not viem's wrapper text); anything without a code is -32603", async () => {
    const { client } = fake(fail(-32003, 'Insufficient margin for this command.'));
    const err = (await client
      .perpsSendCommand({ op: { type: 'cancelOrders', args: [1] } })
      .catch((e: unknown) => e)) as CountersignError;
    expect(err.shortMessage).toBe('Insufficient margin for this command.');
    expect(toCountersignError(new Error('boom'))).toMatchObject({ rpcCode: -32603, shortMessage: 'boom' });
  });
});
