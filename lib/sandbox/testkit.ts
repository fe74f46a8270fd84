/**
 * Test helpers for driving a sandbox over real HTTP on an ephemeral loopback port, with a clock the
 * test controls. Used by the sandbox tests and later integration tests.
 */
import { privateKeyToAccount } from 'viem/accounts';
import type { LocalAccount } from 'viem';
import { startSandbox, type RunningSandbox, type SandboxOptions } from './server';
import { signPerpsCommand } from '../perps/envelope';
import { sendPerpsCommand, perpsRead } from '../perps/client';
import type { PerpsCommand } from '../perps/commands';

/** A running sandbox on a test-controlled clock, with the demo keys and helpers to sign, send and read. */
export type Harness = RunningSandbox & {
  clock: { now: number; advance: (ms: number) => void };
  perps: string;
  clobUrl: string;
  owner: LocalAccount;
  proxy: LocalAccount;
  proxyAuth: { proxy: string; secret: string };
  /** Signs `command` with `account` at the sandbox clock and sends it. */
  send: (account: LocalAccount, command: PerpsCommand, extra?: { exp?: number; nowMs?: number; salt?: number }) => Promise<unknown>;
  read: (name: Parameters<typeof perpsRead>[1], query?: Record<string, string | number | undefined>, auth?: { proxy: string; secret: string }) => Promise<unknown>;
  /** Raw POST/DELETE/PATCH of a JSON body to the perps gateway (for malformed or tampered envelopes). */
  raw: (method: string, path: string, body: unknown, headers?: Record<string, string>) => Promise<{ status: number; body: unknown; headers: Headers }>;
};

/**
 * Starts a sandbox on an ephemeral loopback port whose clock is `clock.now` (ms; advance it with
 * `clock.advance(ms)`). The clock stands still unless `options` names `now: undefined`: then it follows
 * the wall clock (plus whatever was advanced), so a suite that runs longer than the gateway's 5 s
 * timestamp window — a loaded machine, a whole file on one sandbox — is not refused `future_timestamp`.
 */
export async function startHarness(options: SandboxOptions = {}): Promise<Harness> {
  const live = 'now' in options && options.now === undefined;
  let base = Date.now();
  let offset = 0;
  const clock = {
    get now(): number {
      return live ? Date.now() + offset : base;
    },
    set now(ms: number) {
      if (live) offset = ms - Date.now();
      else base = ms;
    },
    advance(ms: number) {
      clock.now += ms;
    },
  };
  const sb = await startSandbox(0, { ...options, now: () => clock.now });
  const perps = `${sb.url}/perps`;
  const owner = privateKeyToAccount(sb.demo.owner.privateKey);
  const proxy = privateKeyToAccount(sb.demo.proxy.privateKey);
  const proxyAuth = { proxy: sb.demo.proxy.address, secret: sb.demo.proxy.secret };
  const { perpsDomain: domain, perpsWithdrawDomain: withdrawDomain } = sb.ctx.config;
  return {
    ...sb,
    clock,
    perps,
    clobUrl: `${sb.url}/clob`,
    owner,
    proxy,
    proxyAuth,
    send: async (account, command, extra = {}) => {
      const envelope = await signPerpsCommand(account, {
        command,
        domain,
        withdrawDomain,
        nowMs: extra.nowMs ?? clock.now,
        ...(extra.exp === undefined ? {} : { exp: extra.exp }),
        ...(extra.salt === undefined ? {} : { salt: extra.salt }),
        commandTimeoutMs: 10 ** 12,
      });
      return sendPerpsCommand(perps, command, envelope);
    },
    read: (name, query, auth = proxyAuth) => perpsRead(perps, name, { auth, ...(query ? { query } : {}) }),
    raw: async (method, path, body, headers = {}) => {
      const res = await fetch(perps + path, {
        method,
        headers: { 'Content-Type': 'application/json', ...headers },
        body: typeof body === 'string' ? body : JSON.stringify(body),
      });
      const text = await res.text();
      let parsed: unknown = text;
      try {
        parsed = JSON.parse(text);
      } catch {
        /* text */
      }
      return { status: res.status, body: parsed, headers: res.headers };
    },
  };
}
