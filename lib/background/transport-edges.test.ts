/**
 * The edges of the transport rule: a redirect from https into clear, URLs that look like loopback or
 * hide their host, and a credential rotation that meets only used nonces (it must store none of the keys
 * it derived, which may be the exposed ones). The real background on the fake browser, against the
 * in-process sandbox.
 */
import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import { readSettings } from '../settings';
import { guardedFetch, transportRefusal } from '../http/transport';
import {
  callAs,
  recordingWebSocket,
  useSandboxBackgrounds,
  type PagedBackground,
  type Reply,
} from '../../test/kits/background';
import type { Harness } from '../../test/kits/sandbox';

let h: Harness;
const kit = useSandboxBackgrounds({ dbPrefix: 'transport-edges', onStart: (x) => (h = x) });
const ws = recordingWebSocket();

/** Onboards the demo account on the sandbox's loopback URLs. */
async function onboard(bg: PagedBackground): Promise<void> {
  expect(((await callAs(bg, 'vault.create', { password: 'a good password' })) as Reply).ok).toBe(true);
  expect(
    (
      (await callAs(bg, 'settings.set', {
        perpsUrl: h.perps,
        perpsWsUrl: `${h.url.replace(/^http/, 'ws')}/perps/v1/ws`,
        clobUrl: h.clobUrl,
        clobWsUrl: `${h.url.replace(/^http/, 'ws')}/clob/ws`,
        gammaUrl: `${h.url}/gamma`,
        dataUrl: `${h.url}/data`,
      })) as Reply
    ).ok,
  ).toBe(true);
  await callAs(bg, 'vault.importOwnerKey', { privateKey: h.demo.owner.privateKey });
  await callAs(bg, 'proxy.import', {
    account: h.demo.owner.address,
    privateKey: h.demo.proxy.privateKey,
    proxy: h.demo.proxy.address,
    secret: h.demo.proxy.secret,
    expiry: h.demo.proxy.expiry,
  });
}

describe('secrets and signatures never follow a redirect into clear', () => {
  it(
    'an https order book answering 307 to http:// gets no signed ' +
      'request in clear: the L1 signature is not re-sent to the http URL',
    async () => {
      // The network as `fetch` behaves: a 307 is followed (same method, body and headers) unless the request
      // says `redirect: 'error'` or `'manual'`. The https order book redirects every request to its http twin.
      const inClear: { url: string; headers: Record<string, string> }[] = [];
      const net: typeof fetch = async function follow(input, init): Promise<Response> {
        const url = String(input instanceof Request ? input.url : input);
        if (url.startsWith('https://clob.example')) {
          const to = url.replace('https://', 'http://');
          if (init?.redirect === 'error') throw new TypeError('fetch failed: redirect mode is "error"');
          if (init?.redirect === 'manual') return new Response(null, { status: 307, headers: { location: to } });
          return follow(to, init);
        }
        if (url.startsWith('http://clob.example')) {
          inClear.push({ url, headers: Object.fromEntries(new Headers(init?.headers).entries()) });
          return fetch(url.replace('http://clob.example', h.clobUrl), init);
        }
        return fetch(input, init);
      };
      ws.reset();
      const bg = await kit.start({ fetchFn: net, WebSocket: ws.WebSocket });
      await onboard(bg);
      expect(
        (
          (await callAs(bg, 'settings.set', {
            clobUrl: 'https://clob.example',
            confirmedPresets: ['custom:clob.example'],
          })) as Reply
        ).ok,
      ).toBe(true);
      expect((await readSettings(bg.db())).clobUrl).toBe('https://clob.example');
      await callAs(bg, 'clob.createOrDerive', { account: h.demo.owner.address });
      expect(inClear.map((r) => r.url)).toEqual([]);
    },
  );
});

describe('a rotation that finds no unused nonce stores none of the keys it derived', () => {
  it(
    'clob.rotateCredentials, every next nonce already used at ' +
      'the exchange, stores none of the existing keys it derived',
    async () => {
      const bg = await kit.start({ WebSocket: ws.WebSocket });
      await onboard(bg);
      const owner = h.demo.owner.address;
      // Keys already exist at the exchange under nonces 1-10 (another profile, an old backup, or whoever held a
      // ClobAuth signature).
      for (let nonce = 1; nonce <= 10; nonce++)
        expect(((await callAs(bg, 'clob.createOrDerive', { account: owner, nonce })) as Reply).ok).toBe(true);
      expect(((await callAs(bg, 'clob.createOrDerive', { account: owner, nonce: 0 })) as Reply).ok).toBe(true);
      const before = await bg.vault().clobCredentials(owner);
      const r = (await callAs(bg, 'clob.rotateCredentials', { account: owner })) as Reply;
      expect(r.ok).toBe(false);
      expect(r.error?.shortMessage).toContain('no new credentials were created');
      // "No new credentials": the vault must not now hold one of the pre-existing keys it derived on the way.
      const after = await bg.vault().clobCredentials(owner);
      expect(after.apiKey).toBe(before.apiKey);
      expect(after.info.nonce).toBe(0);
    },
  );
});

describe('URL tricks meet the transport rule', () => {
  it(
    'capitals, look-alike hosts, userinfo, 0.0.0.0, a mapped IPv6 and a ' +
      'trailing dot are refused in clear; a Request object is checked by its URL',
    async () => {
      const dev = { loopbackCleartext: true };
      for (const url of [
        'HTTP://gateway.example/x',
        'WS://gateway.example/ws',
        'ws://127.0.0.1.evil.com/ws',
        'http://127.0.0.1@evil.com/',
        'http://0.0.0.0:8787/',
        'http://[::ffff:127.0.0.1]/',
        'http://localhost./',
        'http://xn--lcalhost-5ya/',
        'javascript:alert(1)',
        ' http://gateway.example',
      ]) {
        expect(transportRefusal(url, dev), url).toBeDefined();
      }
      for (const url of ['HTTP://LOCALHOST:8787/x', 'http://127.1/', 'http://[::1]:8787/', 'WSS://gateway.example/ws'])
        expect(transportRefusal(url, dev), url).toBeUndefined();
      for (const url of ['http://127.1/', 'http://[::1]/', 'HTTP://LOCALHOST/'])
        expect(transportRefusal(url, { loopbackCleartext: false }), url).toBeDefined();
      const sent: string[] = [];
      const f = guardedFetch(
        async (input) => (sent.push(String(input instanceof Request ? input.url : input)), new Response('{}')),
        dev,
      );
      await expect(f(new Request('http://gateway.example/x', { method: 'POST', body: 'sig' }))).rejects.toThrow(
        /not encrypted/,
      );
      await expect(f(new URL('HTTP://gateway.example/x'))).rejects.toThrow(/not encrypted/);
      expect(sent).toEqual([]);
    },
  );
});
