import { describe, expect, it } from 'vitest';
import type { Address, Hex } from 'viem';
import { ApprovalRegistry } from '../approvals/registry';
import { Authority, pageScopes } from '../authority/epoch';
import { userRejected } from '../errors/rpc';
import type { SigningArtifact } from '../signer/artifact';
import { Consent } from './consent';
import type { ProviderDeps } from './context';
import type { PageReads } from './reads';

const ORIGIN = 'https://app.example';
const ACCOUNT = '0x00000000000000000000000000000000000000a1' as Address;
const DIGEST = `0x${'11'.repeat(32)}` as Hex;

/** An L2 artifact (the simplest to describe). */
const artifact = (now: number): SigningArtifact => ({
  kind: 'l2',
  account: ACCOUNT,
  key: 'api',
  method: 'GET',
  requestPath: '/data/orders',
  timestamp: Math.floor(now / 1000),
  message: 'm',
  signDigests: [DIGEST],
  digest: DIGEST,
  builtAt: now,
  validUntil: now + 60_000,
});

describe('the approval window of a page request', () => {
  it('is opened once the artifact is built and the instruments read, the two read together', async () => {
    let symbolAsked!: () => void;
    let buildAsked!: () => void;
    const symbolStarted = new Promise<void>((r) => (symbolAsked = r));
    const buildStarted = new Promise<void>((r) => (buildAsked = r));
    const registry = new ApprovalRegistry();
    let shown!: () => void;
    const windowShown = new Promise<void>((r) => (shown = r));
    const d = { vault: { unlocked: true }, registry, showApprovals: async () => shown() } as unknown as ProviderDeps;
    // The symbol table answers only once the build began, and the build only once the symbol table was asked: one after
    // the other never finishes.
    const reads = {
      symbol: async () => {
        symbolAsked();
        await buildStarted;
        return (iid: number) => `#${iid}`;
      },
      // The steps come from the same read as the symbols.
      steps: async () => {
        await buildStarted;
        return () => ({});
      },
    } as unknown as PageReads;
    const authority = new Authority();
    const consent = new Consent(d, authority, reads);
    const answer = consent.approve({
      origin: ORIGIN,
      kind: 'l2',
      account: { address: ACCOUNT, label: '', createdAt: 0 },
      build: async () => {
        buildAsked();
        await symbolStarted;
        return artifact(Date.now());
      },
      flagsFor: async () => [],
      ttlMs: 60_000,
      ticket: authority.capture(pageScopes(ORIGIN)),
    });
    answer.catch(() => undefined);
    await Promise.race([
      windowShown,
      new Promise((_, no) =>
        setTimeout(() => no(new Error('the window waited for the symbol table before the build began')), 2_000),
      ),
    ]);
    expect(registry.list().map((r) => r.title)).toEqual(['Authenticate a request']);
    registry.rejectAll(() => userRejected('closed by the test'));
    await expect(answer).rejects.toMatchObject({ code: 4001 });
  });
});
