/**
 * Shared state and configuration of one sandbox instance. Everything is in memory; `now()` is the
 * sandbox clock (injectable, so tests can move time).
 */
import type { Address } from 'viem';
import type { PerpsCommandDomain, PerpsWithdrawDomain } from '../perps/signing';
import { MultiWindow, SlidingWindow, type Budget } from '../ratelimit/sliding-window';
import { PerpsVenue } from './perps/engine';
import { ClobVenue } from './clob/venue';
import { RelayerChain } from './relayer/state';

/** Sandbox configuration. Times in ms unless the name says otherwise. */
export type SandboxConfig = {
  /** Perps command domain, reported by `GET /v1/info/exchange` (default: the venue's `Polymarket` / `1` / 80002). */
  perpsDomain: PerpsCommandDomain;
  perpsWithdrawDomain: PerpsWithdrawDomain;
  /** Collateral token of the perps venue (6 decimals). */
  usdc: Address;
  /** The gateway's default command timeout: oldest accepted `ts`, furthest accepted `exp`. */
  commandTimeoutMs: number;
  /** Newest accepted `ts` ahead of the sandbox clock. */
  clockSkewMs: number;
  /** Perps request-weight budget per account (public reads share one key). */
  perpsRequestBudget: Budget;
  /** Perps action-weight budget per account. */
  perpsActionBudget: Budget;
  /** Time for one deposit confirmation. */
  depositConfirmationMs: number;
  maxProxyLifetimeMs: number;
  maxProxiesPerAccount: number;
  referralCap: number;
  /** Demo collateral credited to an account opened by its first createProxy (base units). */
  newAccountBalance: bigint;
  /** CLOB chain id (ClobAuth and exchange domains). */
  clobChainId: number;
  /** Accepted distance of an L1 / L2 `SVC_TIMESTAMP` from the sandbox clock, in seconds. */
  clobTimestampWindowS: number;
  /** Multiplies every order-book rate limit of the seed (tests use a small factor). */
  clobRateLimitFactor: number;
  /** Time the relayer takes to mine a submitted transaction. */
  relayerMineMs: number;
};

/** The sandbox's default configuration (what `npm start` runs; tests override parts of it). */
export const DEFAULT_CONFIG: SandboxConfig = {
  // The venue's own domain, as the official client hard-codes it (PROTOCOL.md §5.1); tests that need
  // another name pass `config.perpsDomain` / `config.perpsWithdrawDomain`.
  perpsDomain: { name: 'Polymarket', version: '1', chainId: 80002 },
  perpsWithdrawDomain: {
    name: 'Polymarket',
    version: '1',
    chainId: 80002,
    verifyingContract: '0x5a9d5a9d5a9d5a9d5a9d5a9d5a9d5a9d5a9d5a9d',
  },
  usdc: '0xC011a7E12a19f7B1f670d46F03B03f3342E82DFB',
  commandTimeoutMs: 30_000,
  clockSkewMs: 5_000,
  perpsRequestBudget: { limit: 1_200, windowMs: 60_000 },
  perpsActionBudget: { limit: 600, windowMs: 60_000 },
  depositConfirmationMs: 5_000,
  maxProxyLifetimeMs: 180 * 24 * 3_600_000,
  maxProxiesPerAccount: 10,
  referralCap: 50,
  newAccountBalance: 10_000_000_000n,
  clobChainId: 80002,
  clobTimestampWindowS: 300,
  clobRateLimitFactor: 1,
  relayerMineMs: 2_000,
};

/**
 * One request the sandbox answered: `at` Unix ms, `body` the exact text received (≤ 64 KiB; absent for
 * GET). `status` 0: the request reached a silent service (`SandboxContext.setSilent`) and got no answer.
 */
export type RequestLogEntry = { at: number; method: string; path: string; status: number; body?: string };

/** The services the sandbox can make silent (test hook). */
export type SilentService = 'perps' | 'clob';

/**
 * The state of one sandbox: the perps venue, the order-book venue, proxy index, replay keys, rate-limit
 * windows, request log, relayer chain stand-in and bridge records, and the silence / delay test hooks. `now()` is the
 * sandbox clock (Unix ms).
 */
export class SandboxContext {
  readonly venue: PerpsVenue;
  readonly clob: ClobVenue;
  readonly proxyIndex = new Map<string, string>();
  readonly seenCommands = new Map<string, number>();
  readonly perpsRequestWeight: SlidingWindow;
  readonly perpsActionWeight: SlidingWindow;
  readonly clobLimits = new Map<string, MultiWindow>();
  readonly requestLog: RequestLogEntry[] = [];
  /** The relayer's deposit wallets, transactions, builder keys and what they changed (PROTOCOL.md §4). */
  readonly relayerChain = new RelayerChain();
  readonly bridgeWithdrawals: {
    id: string;
    address: string;
    amount: string;
    toChainId: number;
    recipient: string;
    at: number;
  }[] = [];
  /** Services that answer nothing right now (see `setSilent`). */
  readonly silent = new Set<SilentService>();
  /**
   * Services that answer late: extra delay before each request is handled (ms; test hook, e.g. a slow venue during
   * panic).
   */
  readonly delayMs = new Map<SilentService, number>();
  /**
   * The REST requests a perps session command runs through, by request object, with the
   * session's proxy (lowercase): the command verifier refuses another signer (`session_signer_mismatch`)
   * after its one signature recovery, and the delay hook skips them (the session's frames carry the
   * delay). Only in-process callers hold these objects: an HTTP client cannot mark its request.
   */
  readonly sessionRequests = new WeakMap<Request, string>();
  private silenceWaiters: { service: SilentService; release: () => void }[] = [];

  constructor(
    readonly config: SandboxConfig,
    readonly now: () => number,
  ) {
    this.venue = new PerpsVenue(now);
    this.venue.fundingRate = (iid, ts) => this.fundingRate(iid, ts);
    this.clob = new ClobVenue(now);
    this.perpsRequestWeight = new SlidingWindow(config.perpsRequestBudget);
    this.perpsActionWeight = new SlidingWindow(config.perpsActionBudget);
  }

  /**
   * Test hook: while `service` is silent, every request to it is logged with status
   * 0 and held without an answer — a venue that stopped answering. Nothing it asked is processed. Making
   * it speak again answers the held requests `503` (still unprocessed); later requests are served.
   */
  setSilent(service: SilentService, silent: boolean): void {
    if (silent) {
      this.silent.add(service);
      return;
    }
    this.silent.delete(service);
    const released = this.silenceWaiters.filter((w) => w.service === service);
    this.silenceWaiters = this.silenceWaiters.filter((w) => w.service !== service);
    for (const w of released) w.release();
  }

  /** Resolves when `service` speaks again (`setSilent(service, false)`). */
  untilSpeaking(service: SilentService): Promise<void> {
    return this.silent.has(service)
      ? new Promise((release) => this.silenceWaiters.push({ service, release }))
      : Promise.resolve();
  }

  /** Opens an account (demo collateral unless `balance` is given). */
  openAccount(owner: Address, balance = this.config.newAccountBalance) {
    const a = this.venue.account(owner);
    a.balance += balance;
    return a;
  }

  /** Deterministic hourly funding rate of an instrument (a small decimal, ± a few bp). */
  fundingRate(iid: number, ts: number): string {
    const h = Math.floor(ts / 3_600_000);
    const x = Math.sin(h * 0.37 + iid * 1.7) * 0.0004 + Math.cos(h * 0.11 + iid) * 0.0002;
    return x.toFixed(6);
  }

  /** Forgets replay keys older than the command window (they would be refused as stale anyway). */
  pruneReplay(): void {
    const cutoff = this.now() - this.config.commandTimeoutMs - this.config.clockSkewMs - 1_000;
    for (const [k, at] of this.seenCommands) if (at < cutoff) this.seenCommands.delete(k);
  }
}
