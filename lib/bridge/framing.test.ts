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

  it('drops getters and prototypes from params', () => {
    const evil = JSON.parse('{"__proto__":{"polluted":true},"x":1}');
    const r = readRequestFrame({ target: CONTENT_TARGET, id: 'a', method: 'm', params: evil });
    expect(r.ok && ({} as Record<string, unknown>).polluted).toBeFalsy();
  });
});
