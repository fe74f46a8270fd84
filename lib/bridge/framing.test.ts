import { describe, expect, it } from 'vitest';
import { CONTENT_TARGET, readRequestFrame } from './framing';

describe('readRequestFrame', () => {
  it('accepts the exact framing and returns a JSON-clean copy', () => {
    const params = { a: 1, nested: [1, 2] };
    const r = readRequestFrame({ target: CONTENT_TARGET, id: 'abc-1', method: 'perps_sendCommand', params });
    expect(r).toEqual({ ok: true, id: 'abc-1', method: 'perps_sendCommand', params });
    if (r.ok) expect(r.params).not.toBe(params);
  });

  it.each([
    [{ target: 'other', id: 'a', method: 'm' }, 0],
    [{ target: CONTENT_TARGET, id: 'a b', method: 'm' }, 0],
    [{ target: CONTENT_TARGET, id: 'a', method: 'm', extra: 1 }, -32600],
    [{ target: CONTENT_TARGET, id: 'a', method: 'eth call' }, -32600],
    [{ target: CONTENT_TARGET, id: 'a', method: 'm', params: 'x'.repeat(70_000) }, -32602],
    [{ target: CONTENT_TARGET, id: 'a', method: 'm', params: 10n }, -32602],
  ])('refuses %o', (frame, code) => {
    const r = readRequestFrame(frame);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.code).toBe(code);
  });

  it('drops getters and prototypes from params: what reaches the background is a plain JSON copy', () => {
    let reads = 0;
    const proto = { inherited: 'from the prototype' };
    const evil = Object.assign(
      Object.create(proto) as Record<string, unknown>,
      JSON.parse('{"__proto__":{"polluted":true},"x":1}') as object,
    );
    Object.defineProperty(evil, 'getter', { enumerable: true, get: () => ++reads });
    const r = readRequestFrame({ target: CONTENT_TARGET, id: 'a', method: 'm', params: evil });
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    const copy = r.params as Record<string, unknown>;
    expect(copy).not.toBe(evil);
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
    expect(copy.inherited).toBeUndefined();
    expect(copy.polluted).toBeUndefined();
    expect(Object.getOwnPropertyDescriptor(copy, 'getter')).toMatchObject({ value: 1, writable: true });
    const readsAfterCopy = reads;
    expect(copy.getter).toBe(1);
    expect(reads).toBe(readsAfterCopy); // reading the copy never runs the page's getter again
  });
});
