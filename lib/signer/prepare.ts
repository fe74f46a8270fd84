/**
 * Building the artifacts a signature is made over (nothing is signed here): the perps command envelope
 * with its EIP-712 domain and signing key (`preparePerps`), the order-book order batch at each token's
 * tick size (`prepareClob`), and the L2 request a caller sends itself (`prepareL2`). What the approval
 * window shows and the grant checks is exactly what `./submit.ts` later signs (`./artifact.ts`).
 */
import { getAddress, type Address } from 'viem';
import type { PerpsCommand } from '../perps/commands';
import { assertExp, commandTs, randomSalt } from '../perps/envelope';
import { fetchPerpsDomains } from '../perps/client';
import type { PerpsCommandDomain, PerpsWithdrawDomain } from '../perps/signing';
import { orderRequestAmounts } from '../clob/amounts';
import type { ClobOrderRequest } from '../clob/request';
import type { ClobMarket } from '../clob/reads';
import { buildClobOrder, CLOB_MAX_BATCH, exchangeAddress, toPostOrderBody, toPostOrdersBody } from '../clob/order';
import { DepositWalletNotDeployedError, relayerClient } from '../relayer/client';
import { walletHasCode } from '../relayer/chain';
import { DEFAULT_SETTINGS } from '../settings';
import { assertPinnedPerpsDomain } from '../settings/domain';
import type { Vault } from '../vault/vault';
import {
  clobArtifact,
  l2Artifact,
  perpsArtifact,
  type ClobArtifact,
  type L2Artifact,
  type PerpsArtifact,
} from './artifact';
import type { GatewaySettings } from './options';

/** The perps gateway's command domain and withdraw domain (PROTOCOL.md §1.1). */
export type PerpsDomains = { domain: PerpsCommandDomain; withdrawDomain: PerpsWithdrawDomain };

/**
 * What the preparer needs: the gateway settings (read per call), the vault (which key will sign, the
 * API key and signature type), the gateway transport `fetchFn`, the clock `now` (Unix ms), and `market`
 * (a token's tick size and negative-risk flag: `VenueReads.clobMarket`).
 */
export type PrepareOptions = {
  settings: () => Promise<GatewaySettings>;
  vault: Pick<Vault, 'proxyFor' | 'clobCredentials' | 'ownerAccount'>;
  fetchFn: typeof fetch;
  now: () => number;
  market: (tokenId: string) => Promise<ClobMarket>;
};

/** Builds the artifacts of the three kinds (see the module docstring). */
export class ArtifactPreparer {
  private readonly domains = new Map<string, Promise<PerpsDomains>>();

  constructor(private readonly o: PrepareOptions) {}

  /**
   * Cached command and withdraw domains of the configured perps gateway (PROTOCOL.md §1.1), checked
   * against the pinned domain on every call: throws `PerpsDomainMismatchError` when they differ.
   */
  async perpsDomains(): Promise<PerpsDomains> {
    const { perpsUrl, perpsDomain = DEFAULT_SETTINGS.perpsDomain, clobChainId } = await this.o.settings();
    let d = this.domains.get(perpsUrl);
    if (!d) {
      d = fetchPerpsDomains(perpsUrl, this.o.fetchFn);
      d.catch(() => this.domains.delete(perpsUrl));
      this.domains.set(perpsUrl, d);
    }
    const domains = await d;
    assertPinnedPerpsDomain({ ...perpsDomain, chainId: clobChainId }, domains.domain);
    return domains;
  }

  /**
   * Builds the perps artifact for `command`: fresh salt, `ts` now (ms; seconds for withdraw), optional
   * `exp` (Unix ms, checked against now), the domain and the key that will sign. Nothing is signed.
   * Throws `InvalidFieldError` (`exp`), `KeyNotFoundError` (no unexpired proxy).
   */
  async preparePerps(
    account: string,
    command: PerpsCommand,
    opts: { submit: boolean; exp?: number },
  ): Promise<PerpsArtifact> {
    const now = this.o.now();
    if (opts.exp !== undefined) assertExp(opts.exp, now);
    const { domain, withdrawDomain } = await this.perpsDomains();
    const signerAddress =
      command.signer === 'owner' ? getAddress(account) : (await this.o.vault.proxyFor(account)).info.proxy;
    return perpsArtifact({
      account: getAddress(account),
      key: command.signer,
      signerAddress,
      domain: command.struct === 'Withdraw' ? withdrawDomain : domain,
      endpoint: command.endpoint,
      envelope: {
        op: command.body,
        salt: randomSalt(),
        ts: commandTs(command, now),
        ...(opts.exp === undefined ? {} : { exp: opts.exp }),
        ...(command.label === undefined ? {} : { label: command.label }),
      },
      submit: opts.submit,
      builtAt: now,
    });
  }

  /**
   * Builds the order-book artifact for 1-15 order requests: amounts at each token's tick size, the
   * order structs (salt, timestamp ms, maker/signer by signature type), the exchange contract by the
   * market's negative-risk flag, and the unsigned `POST /order` bodies. Nothing is signed. Throws
   * `InvalidFieldError` (batch size), `DepositWalletNotDeployedError`, the vault's and the reads' errors.
   */
  async prepareClob(account: string, orders: readonly ClobOrderRequest[]): Promise<ClobArtifact> {
    if (orders.length < 1 || orders.length > CLOB_MAX_BATCH) toPostOrdersBody(new Array(orders.length));
    const { clobChainId } = await this.o.settings();
    const creds = await this.o.vault.clobCredentials(account);
    // The owner key signs these orders: opened here, before a grant counts a use, so a locked or missing
    // key is refused before anything is counted, and the signature's read is answered from memory
    // (`lib/vault/held-keys.ts`) instead of queuing behind this order's own use write.
    await this.o.vault.ownerAccount(account);
    if (creds.info.signatureType === 3 && creds.info.funder) await this.requireDeployed(creds.info.funder);
    const signer = getAddress(account);
    const now = this.o.now();
    const out: ClobArtifact['orders'][number][] = [];
    for (const req of orders) {
      const m = await this.o.market(req.tokenId);
      const amounts = orderRequestAmounts({ ...req, tickSize: m.tickSize });
      const order = buildClobOrder({
        signer,
        signatureType: creds.info.signatureType,
        ...(creds.info.funder ? { funder: creds.info.funder } : {}),
        tokenId: req.tokenId,
        side: req.side,
        makerAmount: amounts.makerAmount,
        takerAmount: amounts.takerAmount,
        timestampMs: now,
      });
      const full = toPostOrderBody({
        order,
        signature: '0x',
        owner: creds.apiKey,
        orderType: req.orderType,
        postOnly: req.postOnly ?? false,
        ...(req.expiration === undefined ? {} : { expiration: req.expiration }),
        nowMs: now,
      });
      const { signature: _placeholder, ...unsigned } = full.order;
      out.push({
        verifyingContract: exchangeAddress({ negRisk: m.negRisk }),
        negRisk: m.negRisk,
        tickSize: m.tickSize,
        body: { ...full, order: unsigned },
      });
    }
    return clobArtifact({ account: signer, signerAddress: signer, chainId: clobChainId, orders: out, builtAt: now });
  }

  /**
   * A type-3 order waits until its deposit wallet is deployed (relayer `GET /deployed`, setting
   * `relayerUrl`; PROTOCOL.md §4.7: otherwise the venue answers "the order signer address has to be the
   * address of the API KEY"). Throws `DepositWalletNotDeployedError` before anything is built or signed.
   */
  private async requireDeployed(wallet: Address): Promise<void> {
    const {
      relayerUrl = DEFAULT_SETTINGS.relayerUrl,
      rpcUrl = DEFAULT_SETTINGS.rpcUrl,
      clobChainId,
    } = await this.o.settings();
    // The relayer and the chain must agree (code at the address): never the relayer's word alone.
    const deployed =
      (await relayerClient(relayerUrl, this.o.fetchFn).deployed(wallet)) &&
      (await walletHasCode(rpcUrl, wallet, clobChainId, this.o.fetchFn));
    if (!deployed) throw new DepositWalletNotDeployedError(wallet);
  }

  /**
   * Builds the L2 artifact of a request the caller sends itself (`timestamp` now, Unix s). Throws the vault's error
   * when `account` has no API key.
   */
  async prepareL2(account: string, req: { method: string; requestPath: string; body?: string }): Promise<L2Artifact> {
    await this.o.vault.clobCredentials(account); // fails early when there are none
    const now = this.o.now();
    return l2Artifact({ account: getAddress(account), ...req, timestamp: Math.floor(now / 1000), builtAt: now });
  }
}
