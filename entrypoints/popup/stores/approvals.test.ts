import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createApprovalStore, type FocusSource } from './approvals';
import { fakeCall, FakeFailure } from './testkit';

const request = (id: string, digest: string) => ({ id, origin: 'https://app.example', kind: 'perps', title: 'Place an order', lines: [], flags: [], signer: 'proxy key', digest, account: null, createdAt: Date.now(), expiresAt: Date.now() + 60_000 });

function focusSource(initial: boolean) {
  let focused = initial;
  let handlers: { onFocus: () => void; onBlur: () => void } | undefined;
  const source: FocusSource = { has: () => focused, listen: (onFocus, onBlur) => ((handlers = { onFocus, onBlur }), () => (handlers = undefined)) };
  return { source, focus: () => { focused = true; handlers?.onFocus(); }, blur: () => { focused = false; handlers?.onBlur(); } };
}

async function setup(opts: { focused?: boolean; reportShown?: boolean; decideFails?: boolean } = {}) {
  let pending = [request('a', '0x01')];
  const { call, calls } = fakeCall({
    'approval.list': () => pending,
    'approval.decide': (p) => {
      if (opts.decideFails) throw new FakeFailure({ name: 'ApprovalNotFoundError', shortMessage: 'That request expired.' });
      pending = pending.filter((r) => r.id !== p.id);
      return null;
    },
    'approval.showing': () => null,
    'grant.offer': () => ({ venue: 'perps', markets: [{ id: '2', name: 'ETH' }], equity: '1000', proposal: { maxNotional: '100', dailyNotional: '1000', priceBandPct: '2' } }),
  });
  const onEmpty = vi.fn();
  const f = focusSource(opts.focused ?? true);
  const store = createApprovalStore({ call, onEmpty, reportShown: opts.reportShown ?? false, focus: f.source, pollMs: 10_000 });
  const stop = store.start();
  await vi.advanceTimersByTimeAsync(0);
  return { store, calls, onEmpty, f, stop, setPending: (p: ReturnType<typeof request>[]) => (pending = p) };
}

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

describe('createApprovalStore', () => {
  it('arms Approve only after 1 s of focus, and disarms on blur', async () => {
    const { store, f, stop } = await setup();
    expect(store.head.value?.id).toBe('a');
    expect(store.armed.value).toBe(false);
    await vi.advanceTimersByTimeAsync(999);
    expect(store.armed.value).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(store.armed.value).toBe(true);
    f.blur();
    expect(store.armed.value).toBe(false);
    f.focus();
    await vi.advanceTimersByTimeAsync(1_000);
    expect(store.armed.value).toBe(true);
    stop();
  });

  it('never arms without focus, and ignores Approve while disarmed', async () => {
    const { store, calls, stop } = await setup({ focused: false });
    await vi.advanceTimersByTimeAsync(5_000);
    expect(store.armed.value).toBe(false);
    await store.decide(true);
    expect(calls.some((c) => c.type === 'approval.decide')).toBe(false);
    stop();
  });

  it('approves with the digest shown, then reports the empty queue', async () => {
    const { store, calls, onEmpty, stop } = await setup();
    await vi.advanceTimersByTimeAsync(1_000);
    await store.decide(true);
    expect(calls.find((c) => c.type === 'approval.decide')?.payload).toEqual({ id: 'a', approve: true, digest: '0x01' });
    expect(store.head.value).toBeUndefined();
    expect(onEmpty).toHaveBeenCalledOnce();
    stop();
  });

  it('rejects without a digest and shows a refusal in plain words', async () => {
    const { store, calls, stop } = await setup({ decideFails: true });
    await store.decide(false);
    expect(calls.find((c) => c.type === 'approval.decide')?.payload).toEqual({ id: 'a', approve: false });
    expect(store.error.value).toBe('That request expired.');
    stop();
  });

  it('disarms when the artifact is refreshed (new digest) and tells the background in the window', async () => {
    const { store, calls, setPending, stop } = await setup({ reportShown: true });
    await vi.advanceTimersByTimeAsync(1_000);
    expect(store.armed.value).toBe(true);
    setPending([request('a', '0x02')]);
    await store.load();
    expect(store.armed.value).toBe(false);
    expect(calls.filter((c) => c.type === 'approval.showing').map((c) => c.payload.digest)).toEqual(['0x01', '0x02']);
    stop();
  });

  it('forgets the grant offer when another request is shown', async () => {
    const { store, setPending, stop } = await setup();
    await store.offer();
    expect(store.granting.value).toBeDefined();
    setPending([request('b', '0x03')]);
    await store.load();
    expect(store.granting.value).toBeUndefined();
    stop();
  });
});
