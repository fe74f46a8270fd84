import { describe, expect, expectTypeOf, it } from 'vitest';
import { createRouter, identifySender, OUTPUT_CHECKS, type Handler, type Handlers } from './router';
import { createCaller } from './client';
import type { ProcedureOutput } from './protocol';

const ids = { extensionId: 'ext', extensionOrigin: 'chrome-extension://ext/' };
const popup = { id: 'ext', url: 'chrome-extension://ext/popup.html' };
const status: ProcedureOutput<'vault.status'> = {
  initialized: true,
  unlocked: false,
  state: 'locked',
  retryAfterMs: 0,
  accounts: [],
  activeAccount: null,
  pendingApprovals: 0,
  session: [],
  venueChosen: true,
  recoverable: false,
};

/** Handlers where only `overrides` answer; any other procedure throws (the tests call none). */
function handlersWith(overrides: Partial<Handlers>): Handlers {
  const unused = async () => {
    throw new Error('not called');
  };
  return new Proxy(overrides, {
    get: (target, key) => (typeof key === 'string' && key in target ? Reflect.get(target, key) : unused),
  }) as Handlers;
}

/** A handler that answers a shape its contract does not describe (what a bug would do at run time). */
const wrongStatus = async (): Promise<ProcedureOutput<'vault.status'>> => JSON.parse('{"initialized":"yes"}');

describe('createRouter output checks', () => {
  it('replies Messaging.InvalidOutputError naming the field when a handler answers the wrong shape', async () => {
    const route = createRouter(handlersWith({ 'vault.status': wrongStatus }), ids, { checkOutputs: true });
    const reply = await route({ type: 'vault.status', payload: {} }, popup);
    expect(reply).toMatchObject({
      ok: false,
      error: { name: 'Messaging.InvalidOutputError', data: { procedure: 'vault.status', field: 'initialized' } },
    });
  });

  it('passes an answer of the right shape unchanged', async () => {
    const route = createRouter(handlersWith({ 'vault.status': async () => status }), ids, { checkOutputs: true });
    expect(await route({ type: 'vault.status', payload: {} }, popup)).toEqual({ ok: true, result: status });
  });

  it('does not look at the answer when checking is off (production builds)', async () => {
    const route = createRouter(handlersWith({ 'vault.status': wrongStatus }), ids, { checkOutputs: false });
    expect(await route({ type: 'vault.status', payload: {} }, popup)).toEqual({
      ok: true,
      result: { initialized: 'yes' },
    });
  });

  it('is on under vitest', () => {
    expect(OUTPUT_CHECKS).toBe(true);
  });

  it('refuses every procedure to a content script (pages use the port)', async () => {
    const route = createRouter(handlersWith({ 'vault.status': async () => status }), ids, { checkOutputs: true });
    const page = { id: 'ext', url: 'https://site.example/', frameId: 0, tab: { id: 1, url: 'https://site.example/' } };
    expect(await route({ type: 'vault.status', payload: {} }, page)).toMatchObject({
      ok: false,
      error: { code: 4100 },
    });
    expect(await route({ type: 'page.request', payload: { id: '1', method: 'eth_accounts' } }, page)).toMatchObject({
      ok: false,
      error: { code: 4200 },
    });
  });
});

describe('types', () => {
  it('a handler answering another shape is not a Handler', () => {
    expectTypeOf<() => Promise<{ initialized: string }>>().not.toExtend<Handler<'vault.status'>>();
    expectTypeOf<() => Promise<null>>().toExtend<Handler<'vault.lock'>>();
  });

  it('a caller infers the result from the contract', () => {
    const call = createCaller(async (m) => ({
      ok: true,
      result: (m as { type: string }).type === 'approval.empty' ? { closed: true } : status,
    }));
    expectTypeOf(call('vault.status', {})).resolves.toEqualTypeOf<ProcedureOutput<'vault.status'>>();
    expectTypeOf(call('approval.empty', {})).resolves.toEqualTypeOf<{ closed: boolean }>();
  });
});

describe('createCaller', () => {
  it('resolves the result of an ok reply and throws RemoteError for an error reply or no reply', async () => {
    expect(await createCaller(async () => ({ ok: true, result: status }))('vault.status', {})).toEqual(status);
    await expect(
      createCaller(async () => ({
        ok: false,
        error: { name: 'Vault.LockedError', shortMessage: 'Locked.', code: 4900 },
      }))('vault.status', {}),
    ).rejects.toMatchObject({ name: 'Vault.LockedError', code: 4900 });
    await expect(createCaller(async () => undefined)('vault.status', {})).rejects.toMatchObject({ name: 'NoReply' });
  });

  it('refuses an answer that does not match the output schema, naming the procedure and field', async () => {
    const call = createCaller(async () => ({ ok: true, result: { closed: 'yes' } }));
    await expect(call('approval.empty', {})).rejects.toMatchObject({
      name: 'Messaging.InvalidOutputError',
      data: { procedure: 'approval.empty', field: 'closed' },
    });
  });
});

describe('identifySender', () => {
  it('takes the side panel for the popup (the same cockpit) and refuses other extension pages', () => {
    expect(
      identifySender({ id: 'ext', url: 'chrome-extension://ext/sidepanel.html' }, ids.extensionId, ids.extensionOrigin),
    ).toEqual({ kind: 'popup', origin: 'chrome-extension://ext' });
    expect(
      identifySender({ id: 'ext', url: 'chrome-extension://ext/other.html' }, ids.extensionId, ids.extensionOrigin),
    ).toBeUndefined();
    expect(
      identifySender(
        { id: 'other', url: 'chrome-extension://other/sidepanel.html' },
        ids.extensionId,
        ids.extensionOrigin,
      ),
    ).toBeUndefined();
  });
});
