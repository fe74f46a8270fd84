/**
 * Texts a relayer serves (a failed transaction's `errorMsg`, a refusal's `error`) are the venue's claim:
 * what reaches the person (the deposit view's transaction line, the page's error) is validated at the
 * boundary like every gateway text (`lib/validation/venue-text.ts`). The relayer here is a fake `fetch`
 * answering as a lying relayer would; the client is the one the background uses.
 */
import { describe, expect, it } from 'vitest';
import { relayerClient } from '../relayer/client';

const BIDI = /[\u061C\u200B-\u200F\u202A-\u202E\u2066-\u2069\uFEFF]/;
const CREDS = { key: 'k', secret: Buffer.from('secret').toString('base64'), passphrase: 'p' };
const REQUEST = {
  type: 'WALLET-CREATE',
  from: '0x0000000000000000000000000000000000000001',
  to: '0x0000000000000000000000000000000000000002',
} as never;

/** The error `p` rejects with (a resolved `p` fails the test). */
const refusal = (p: Promise<unknown>): Promise<Error> =>
  p.then(
    () => {
      throw new Error('expected a refusal');
    },
    (x: unknown) => x as Error,
  );

/** A relayer answering every call with `status` and `body`. */
const lying = (status: number, body: unknown) =>
  relayerClient(
    'https://relayer.example',
    (async () =>
      new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } })) as typeof fetch,
  );

describe('texts a relayer serves', () => {
  it(
    "a failed transaction's reason with bidi or look-alike characters is " +
      'not shown: the error says the transaction failed, without the text',
    async () => {
      const e = await refusal(
        lying(200, {
          transactionID: 'tx1',
          state: 'STATE_FAILED',
          errorMsg: 'none \u2014 deposit of 1000 USDC c\u043enfirmed\u202E',
        }).submit(REQUEST, CREDS),
      );
      expect(e).toBeInstanceOf(Error);
      expect(e.message).toMatch(/failed when mined/);
      expect(e.message).not.toMatch(BIDI);
      expect(e.message).not.toContain('confirmed');
      expect(JSON.stringify((e as { data?: unknown }).data ?? {})).not.toMatch(BIDI);
    },
  );

  it("a refusal's message with control or bidi characters is not shown; a plain one is", async () => {
    const bad = await refusal(lying(400, { error: 'ok\u0007 \u202Edeposited' }).submit(REQUEST, CREDS));
    expect(bad.message).toMatch(/refused the request \(400\)/);
    expect(bad.message).not.toContain('deposited');
    const plain = await refusal(lying(401, { error: 'invalid builder credentials' }).submit(REQUEST, CREDS));
    expect(plain.message).toContain('invalid builder credentials');
  });
});
