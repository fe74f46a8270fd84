import { describe, expect, it } from 'vitest';
import { BaseError, toWireError } from './base';
import { NetworkError, requestJson } from '../http/json';
import { WrongPasswordError } from '../vault/errors';
import { createCaller, RemoteError } from '../messaging/client';

describe('toWireError', () => {
  it('keeps name, shortMessage, code and structured data; drops cause and details', () => {
    const err = new BaseError('Short.', {
      cause: new Error('secret cause 0xdeadbeef'),
      details: 'detail 0xabc',
      data: { retryAfterMs: 2000 },
    });
    expect(toWireError(err)).toEqual({ name: 'BaseError', shortMessage: 'Short.', data: { retryAfterMs: 2000 } });
    expect(JSON.stringify(toWireError(err))).not.toContain('0xdeadbeef');
  });

  it('turns anything that is not a BaseError into a generic internal error', () => {
    expect(toWireError(new Error('library text quoting input'))).toEqual({
      name: 'InternalError',
      shortMessage: 'An internal error occurred.',
    });
  });

  it('carries the unlock back-off as data, so the popup never parses it from the text', async () => {
    const call = createCaller(async () => ({ ok: false, error: toWireError(new WrongPasswordError(4_000)) }));
    const err = (await call('vault.unlock', { password: 'x' }).catch((e: unknown) => e)) as RemoteError;
    expect(err).toBeInstanceOf(RemoteError);
    expect(err).toMatchObject({ name: 'Vault.WrongPasswordError', data: { retryAfterMs: 4_000 } });
  });
});

describe('NetworkError', () => {
  it('is a BaseError that names the gateway that did not answer', async () => {
    const refused: typeof fetch = async () => {
      throw new TypeError('fetch failed');
    };
    const err = await requestJson('http://127.0.0.1:9/perps/v1/info/exchange', { method: 'GET' }, refused).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(NetworkError);
    expect(err).toBeInstanceOf(BaseError);
    expect(toWireError(err)).toEqual({
      name: 'Http.NetworkError',
      code: -32002, // EIP-1474 resource unavailable: never a code a dapp library retries
      shortMessage: 'No answer from http://127.0.0.1:9/perps. Check your connection and the gateway URL in Settings.',
      data: { gateway: 'http://127.0.0.1:9/perps' },
    });
  });
});
