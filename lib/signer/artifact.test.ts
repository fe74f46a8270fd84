import { describe, expect, it } from 'vitest';
import type { Address, Hex } from 'viem';
import { createOrders, internalTransfer, withdraw } from '../perps/commands';
import { perpsOpDigest, withdrawDigest } from '../perps/signing';
import { buildClobOrder, clobOrderDigest, EXCHANGE_V2, NEG_RISK_EXCHANGE_V2 } from '../clob/order';
import {
  ArtifactMismatchError,
  bindingDigest,
  clobArtifact,
  describeArtifact,
  l2Artifact,
  perpsArtifact,
  verifyArtifact,
  type SigningArtifact,
} from './artifact';

const OWNER = '0x5aa4B1F3C0E0d5A8d0f0a1b2c3d4e5f607080307' as Address;
const PROXY = '0xe151000000000000000000000000000000003d49' as Address;
const OTHER = '0x9999999999999999999999999999999999999999' as Address;
const USDC = '0xC011a7E12a19f7B1f670d46F03B03f3342E82DFB' as Address;
const domain = { name: 'Perps', version: '1', chainId: 80002 };
const withdrawDomain = { ...domain, verifyingContract: '0x00000000000000000000000000000000000000d0' as Address };
const NOW = 1_767_000_000_000;
const symbol = (iid: number) => (iid === 2 ? 'ETH-PERP' : `#${iid}`);

const buy = createOrders({ orders: [{ iid: 2, buy: true, qty: '2.5', p: '3120.50', tif: 'gtc', po: true }] });
const order = () =>
  perpsArtifact({
    account: OWNER,
    key: 'proxy',
    signerAddress: PROXY,
    domain,
    endpoint: buy.endpoint,
    envelope: { op: buy.body, salt: 77, ts: NOW },
    submit: true,
    builtAt: NOW,
  });

const w = withdraw({ account: OWNER, token: USDC, amount: '10000000', to: OTHER });
const withdrawal = () =>
  perpsArtifact({
    account: OWNER,
    key: 'owner',
    signerAddress: OWNER,
    domain: withdrawDomain,
    endpoint: w.endpoint,
    envelope: { op: w.body, salt: 5, ts: Math.floor(NOW / 1000) },
    submit: true,
    builtAt: NOW,
  });

const clob = () => {
  const o = buildClobOrder({
    signer: OWNER,
    signatureType: 0,
    tokenId: '123456789012345678901234567890',
    side: 'BUY',
    makerAmount: '4000000',
    takerAmount: '10000000',
    timestampMs: NOW,
    salt: '42',
  });
  const { salt, ...rest } = o;
  return clobArtifact({
    account: OWNER,
    signerAddress: OWNER,
    chainId: 80002,
    orders: [
      {
        verifyingContract: EXCHANGE_V2,
        negRisk: false,
        tickSize: '0.01',
        body: {
          deferExec: false,
          postOnly: false,
          order: { salt: Number(salt), ...rest, expiration: '0' },
          owner: 'api-key-1',
          orderType: 'GTC',
        },
      },
    ],
    builtAt: NOW,
  });
};

const l2 = () =>
  l2Artifact({
    account: OWNER,
    method: 'DELETE',
    requestPath: '/order',
    body: '{"orderID":"0xabc"}',
    timestamp: Math.floor(NOW / 1000),
    builtAt: NOW,
  });

/** A writable deep copy with `edit` applied and the stored digests left as they were. */
function altered<T extends SigningArtifact>(a: T, edit: (x: T) => void): T {
  const copy = structuredClone(a) as T;
  edit(copy);
  return copy;
}

describe('perpsArtifact', () => {
  it('signs the EIP-712 digest of the tuple rebuilt from the JSON op that is sent', () => {
    const a = order();
    const cmd = createOrders({ orders: [{ iid: 2, buy: true, qty: '2.5', p: '3120.50', tif: 'gtc', po: true }] });
    expect(a.signDigests).toEqual([perpsOpDigest({ domain, op: cmd.op, salt: 77, ts: NOW })]);
    expect(a.digest).toBe(bindingDigest(a));
    expect(verifyArtifact(a, a.digest)).toEqual(a.signDigests);
    expect(Object.isFrozen(a.envelope.op)).toBe(true);
  });

  it('signs a withdraw on the withdraw domain with ts in seconds', () => {
    const a = withdrawal();
    expect(a.signDigests[0]).toBe(
      withdrawDigest({
        domain: withdrawDomain,
        account: OWNER,
        token: USDC,
        amount: 10_000_000n,
        to: OTHER,
        salt: 5,
        ts: Math.floor(NOW / 1000),
      }),
    );
    expect(describeArtifact(a, symbol)).toEqual({
      title: 'Withdraw funds',
      lines: ['Withdraw 10.00 USDC (10000000 base units) to 0x99…9999'],
      signer: 'owner key',
    });
  });

  it('describes exactly the command it will sign', () => {
    expect(describeArtifact(order(), symbol).lines).toEqual([
      'Buy 2.5 ETH-PERP at 3,120.50, good-til-cancelled, post-only — request weight 1, action weight 1',
    ]);
    const t = internalTransfer({ account: OWNER, token: USDC, amount: '5000', to: OTHER });
    const a = perpsArtifact({
      account: OWNER,
      key: 'owner',
      signerAddress: OWNER,
      domain,
      endpoint: t.endpoint,
      envelope: { op: t.body, salt: 1, ts: NOW },
      submit: false,
      builtAt: NOW,
    });
    expect(describeArtifact(a, symbol).lines).toEqual([
      'Transfer 5,000 USDC to 0x99…9999',
      'The signed command is returned to the site, which may submit it.',
    ]);
  });
});

describe('verifyArtifact', () => {
  const cases: [string, () => SigningArtifact][] = [
    ['the order quantity', () => altered(order(), (x) => ((x.envelope.op.args as { qty: string }[])[0]!.qty = '25'))],
    ['the order side', () => altered(order(), (x) => ((x.envelope.op.args as { buy: boolean }[])[0]!.buy = false))],
    ['the salt', () => altered(order(), (x) => (x.envelope.salt = 78))],
    ['the timestamp', () => altered(order(), (x) => (x.envelope.ts = NOW + 1))],
    ['the unsigned exp', () => altered(order(), (x) => (x.envelope.exp = NOW + 5_000))],
    ['the submit flag', () => altered(order(), (x) => (x.submit = false))],
    ['the domain', () => altered(order(), (x) => (x.domain = { ...domain, chainId: 1 }))],
    ['the signing key', () => altered(order(), (x) => (x.key = 'owner'))],
    ['the endpoint', () => altered(order(), (x) => (x.endpoint = { method: 'POST', path: '/v1/account/withdraw' }))],
    [
      'the withdraw destination',
      () => altered(withdrawal(), (x) => ((x.envelope.op.args as { to: string }).to = PROXY)),
    ],
    [
      'the withdraw amount',
      () => altered(withdrawal(), (x) => ((x.envelope.op.args as { amount: string }).amount = '10000001')),
    ],
    [
      'an order amount',
      () => altered(clob(), (x) => ((x.orders[0]!.body.order as { makerAmount: string }).makerAmount = '4000001')),
    ],
    [
      'the exchange contract',
      () =>
        altered(
          clob(),
          (x) => ((x.orders[0] as { verifyingContract: Address }).verifyingContract = NEG_RISK_EXCHANGE_V2),
        ),
    ],
    [
      'the unsigned order type',
      () => altered(clob(), (x) => ((x.orders[0]!.body as { orderType: string }).orderType = 'FOK')),
    ],
    [
      'the unsigned expiration',
      () => altered(clob(), (x) => ((x.orders[0]!.body.order as { expiration: string }).expiration = '1')),
    ],
    ['the L2 body', () => altered(l2(), (x) => ((x as { body?: string }).body = '{"orderID":"0xdef"}'))],
    ['the L2 path', () => altered(l2(), (x) => ((x as { requestPath: string }).requestPath = '/orders'))],
  ];
  for (const [what, make] of cases) {
    it(`refuses to sign when ${what} changed after approval`, () => {
      const original =
        what.startsWith('an order') ||
        what.includes('exchange') ||
        what.includes('order type') ||
        what.includes('expiration')
          ? clob()
          : what.startsWith('the L2')
            ? l2()
            : what.startsWith('the withdraw')
              ? withdrawal()
              : order();
      expect(() => verifyArtifact(make(), original.digest)).toThrow(ArtifactMismatchError);
    });
  }

  it('refuses a digest other than the approved one, even when the artifact is intact', () => {
    const a = order();
    expect(verifyArtifact(a, order().digest)).toEqual(a.signDigests); // same content, same digest
    expect(() => verifyArtifact(a, withdrawal().digest)).toThrow(ArtifactMismatchError);
  });

  it('an artifact built here cannot be changed before it is signed, at any depth', () => {
    for (const a of [order(), clob()]) {
      const digests = verifyArtifact(a, a.digest);
      const leaves: unknown[] = [a];
      for (const x of leaves) if (x && typeof x === 'object') leaves.push(...Object.values(x));
      for (const x of leaves) if (x && typeof x === 'object') expect(Object.isFrozen(x)).toBe(true);
      expect(() => ((a.signDigests as Hex[])[0] = '0x00')).toThrow(TypeError);
      expect(verifyArtifact(a, a.digest)).toEqual(digests);
      expect(() => verifyArtifact(a, withdrawal().digest)).toThrow(ArtifactMismatchError);
    }
  });

  it('refuses an artifact built inconsistent with its own command or contract, as when it was changed after', () => {
    const wrongKey = perpsArtifact({ ...order(), key: 'owner' });
    expect(() => verifyArtifact(wrongKey, wrongKey.digest)).toThrow(ArtifactMismatchError);
    expect(() => perpsArtifact({ ...order(), kind: 'l2' } as Parameters<typeof perpsArtifact>[0])).toThrow(
      ArtifactMismatchError,
    );
    const c = clob();
    const wrongContract = clobArtifact({
      ...c,
      orders: [{ ...c.orders[0]!, verifyingContract: NEG_RISK_EXCHANGE_V2 }],
    });
    expect(() => verifyArtifact(wrongContract, wrongContract.digest)).toThrow(ArtifactMismatchError);
  });

  it('an artifact built from input that can still change (a getter, a borrowed prototype) is verified in full', () => {
    let qty = '2.5';
    const op = structuredClone(buy.body);
    Object.defineProperty((op.args as object[])[0], 'qty', { get: () => qty, enumerable: true });
    const base = order();
    const tricky = perpsArtifact({ ...base, envelope: { ...base.envelope, op } });
    expect(verifyArtifact(tricky, tricky.digest)).toEqual(base.signDigests);
    qty = '25';
    expect(() => verifyArtifact(tricky, tricky.digest)).toThrow(ArtifactMismatchError);
    const proto = { ...base.envelope };
    const inherited = perpsArtifact({ ...base, envelope: Object.create(proto) as typeof base.envelope });
    expect(verifyArtifact(inherited, inherited.digest)).toEqual(base.signDigests);
    proto.salt = 78;
    expect(() => verifyArtifact(inherited, inherited.digest)).toThrow(ArtifactMismatchError);
    let label = 'a';
    const json = { ...base.envelope, toJSON: () => ({ ...base.envelope, label }) };
    const withJson = perpsArtifact({ ...base, envelope: json as typeof base.envelope });
    expect(verifyArtifact(withJson, withJson.digest)).toEqual(base.signDigests);
    label = 'b';
    expect(() => verifyArtifact(withJson, withJson.digest)).toThrow(ArtifactMismatchError);
  });

  it('refuses an artifact whose stored digests were recomputed to hide a change', () => {
    const a = order();
    const b = altered(a, (x) => ((x.envelope.op.args as { qty: string }[])[0]!.qty = '25'));
    const forged = altered(b, (x) => ((x as { digest: Hex }).digest = bindingDigest(b)));
    expect(() => verifyArtifact(forged, a.digest)).toThrow(ArtifactMismatchError);
  });
});

describe('clobArtifact', () => {
  it('signs each order struct built from the body that is sent, and decodes it in plain words', () => {
    const a = clob();
    const { expiration: _e, ...signed } = a.orders[0]!.body.order;
    expect(a.signDigests).toEqual([
      clobOrderDigest({
        chainId: 80002,
        verifyingContract: EXCHANGE_V2,
        order: { ...signed, salt: String(signed.salt) },
      }),
    ]);
    expect(a.path).toBe('/order');
    expect(describeArtifact(a, symbol).lines).toEqual([
      'Buy 10.00 shares of token 123456…7890 at 0.40 (pay 4.00 USDC), good-til-cancelled',
    ]);
  });
});

describe('l2Artifact', () => {
  it('words an order the page will post, and shows one missing its signer or its GTD expiration as undecodable', () => {
    const order = {
      tokenId: '123456789012345678901234567890',
      side: 'BUY',
      makerAmount: '4000000',
      takerAmount: '10000000',
      maker: OWNER,
      signer: OWNER,
      expiration: '1900000000',
    };
    const lines = (body: unknown) =>
      describeArtifact(
        l2Artifact({
          account: OWNER,
          method: 'POST',
          requestPath: '/orders',
          body: JSON.stringify(body),
          timestamp: Math.floor(NOW / 1000),
          builtAt: NOW,
        }),
        symbol,
      ).lines.slice(1);
    const { signer: _s, ...unsigned } = order;
    const { expiration: _x, ...noExpiry } = order;
    expect(
      lines([
        { order, orderType: 'GTD' },
        { order: unsigned, orderType: 'GTC' },
        { order: noExpiry, orderType: 'GTD' },
      ]),
    ).toEqual([
      'Buy 10.00 shares of token 123456…7890 at 0.40 (pay 4.00 USDC), good-til-date until 2030-03-17T17:46:40.000Z',
      expect.stringMatching(/^An order this window cannot decode: /),
      expect.stringMatching(/^An order this window cannot decode: /),
    ]);
  });

  it('holds the exact HMAC message and decodes a cancel', () => {
    const a = l2();
    expect(a.message).toBe(`${Math.floor(NOW / 1000)}DELETE/order{"orderID":"0xabc"}`);
    expect(describeArtifact(a, symbol).lines).toEqual([
      'Sign DELETE /order for the order-book exchange with your API key.',
      'Cancel order 0xabc',
    ]);
  });
});
