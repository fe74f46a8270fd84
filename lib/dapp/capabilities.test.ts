/**
 * A capability answer that is not `{ version, methods }` is a typed error that says so, never a crash or a blame on
 * the site's own params; a raw EIP-1193 error (a plain `{ code, message }`) keeps the provider's message.
 */
import { describe, expect, it } from 'vitest';
import { getCountersignCapabilities } from './capabilities';
import { CountersignError, ExtensionOutdatedError, toCountersignError } from './errors';

const answering = (answer: unknown) => ({ request: () => Promise.resolve(answer) }) as never;

describe('the capability answer', () => {
  it.each([undefined, null, 'x', {}, { version: 1, methods: [] }, { version: '1.0.0', methods: [1] }])(
    'refuses %j with a typed -32603 error naming the method',
    async (answer) => {
      const e = await getCountersignCapabilities(answering(answer)).catch((x: unknown) => x);
      expect(e).toBeInstanceOf(CountersignError);
      expect(e).not.toBeInstanceOf(ExtensionOutdatedError);
      expect((e as CountersignError).rpcCode).toBe(-32603);
      expect((e as CountersignError).shortMessage).toMatch(/countersign_getCapabilities .* \{ version, methods \}/);
    },
  );

  it("keeps a raw provider error's own message", () => {
    expect(toCountersignError({ code: 4900, message: 'The vault is locked.' }).shortMessage).toBe(
      'The vault is locked.',
    );
  });
});
