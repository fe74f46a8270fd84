/**
 * Signing one verified artifact with the key it names (`./artifact.ts`; the caller ran `verifyArtifact`
 * and holds its digests). Each function reads the key from the vault, refuses with `ArtifactMismatchError`
 * when the key (or the API key) changed since the artifact was built, runs `recheck` (the signing gate and
 * the authority ticket, `./gate.ts`) right before the first signature — nothing awaits between them — and
 * signs exactly the artifact's digests. Nothing is sent here (`./submit.ts` sends).
 */
import type { Hex, LocalAccount } from 'viem';
import { BaseError } from '../errors/base';
import type { PerpsEnvelope } from '../perps/envelope';
import { buildL2Headers, type L2Headers } from '../clob/auth';
import { signDepositWalletOrder, type PostOrderBody } from '../clob/order';
import type { Vault } from '../vault/vault';
import {
  ArtifactMismatchError,
  orderStructOf,
  type ClobArtifact,
  type L2Artifact,
  type PerpsArtifact,
} from './artifact';

/** The vault reads signing needs. */
type Keys = Pick<Vault, 'ownerAccount' | 'proxyFor' | 'clobCredentials' | 'depositWallet'>;

/**
 * Signs exactly `digest` (a 32-byte EIP-712 digest) with a local key. Throws `BaseError` when the key cannot sign a
 * digest.
 */
export async function signExact(account: LocalAccount, digest: Hex): Promise<Hex> {
  if (!account.sign) throw new BaseError('This key cannot sign a digest.');
  return account.sign({ hash: digest });
}

/**
 * The signed envelope of a perps artifact: `digest` (its one digest) signed by the owner or the proxy key
 * the artifact names. Throws `ArtifactMismatchError` (another key now), the vault's errors, what `recheck` throws.
 */
export async function signPerpsEnvelope(
  vault: Keys,
  artifact: PerpsArtifact,
  digest: Hex,
  recheck: () => void,
): Promise<PerpsEnvelope> {
  const { op, salt, ts, exp, label } = artifact.envelope;
  const signer =
    artifact.key === 'owner'
      ? await vault.ownerAccount(artifact.account)
      : (await vault.proxyFor(artifact.account)).signer;
  if (signer.address.toLowerCase() !== artifact.signerAddress.toLowerCase())
    throw new ArtifactMismatchError('the signing key changed');
  recheck();
  return {
    op,
    sig: await signExact(signer, digest),
    salt,
    ts,
    ...(exp === undefined ? {} : { exp }),
    ...(label === undefined ? {} : { label }),
  };
}

/**
 * The signed `POST /order` bodies of an order-book artifact, one per order, signed by the owner key
 * (`digests[i]`; a type-3 order: the ERC-7739 wrap of the same order hash for its deposit wallet,
 * PROTOCOL.md §4.5). Throws `ArtifactMismatchError` (another owner key or API key now), the vault's
 * errors, what `recheck` throws.
 */
export async function signClobOrders(
  vault: Keys,
  artifact: ClobArtifact,
  digests: readonly Hex[],
  recheck: () => void,
): Promise<PostOrderBody[]> {
  // The three reads side by side (the deposit wallet's is an IndexedDB read); checked in this order after.
  const [owner, creds, wallet] = await Promise.all([
    vault.ownerAccount(artifact.account),
    vault.clobCredentials(artifact.account),
    vault.depositWallet(artifact.account),
  ]);
  if (owner.address.toLowerCase() !== artifact.signerAddress.toLowerCase())
    throw new ArtifactMismatchError('the signing key changed');
  if (artifact.orders.some((o) => o.body.owner !== creds.apiKey))
    throw new ArtifactMismatchError('the API key changed');
  const beacon = wallet?.kind === 'beacon' ? { beacon: wallet.beacon } : {};
  recheck(); // nothing awaits between the gate and the first signature
  const bodies: PostOrderBody[] = [];
  for (const [i, o] of artifact.orders.entries()) {
    const digest = digests[i];
    if (digest === undefined) throw new ArtifactMismatchError('an order has no digest');
    const signature =
      o.body.order.signatureType === 3
        ? await signDepositWalletOrder(owner, {
            chainId: artifact.chainId,
            verifyingContract: o.verifyingContract,
            order: orderStructOf(o.body),
            ...beacon,
          })
        : await signExact(owner, digest);
    bodies.push({ ...o.body, order: { ...o.body.order, signature } });
  }
  return bodies;
}

/**
 * The five L2 headers (seed names) of an L2 artifact: an HMAC with the account's API secret. Throws the vault's errors,
 * what `recheck` throws.
 */
export async function signL2Headers(vault: Keys, artifact: L2Artifact, recheck: () => void): Promise<L2Headers> {
  const creds = await vault.clobCredentials(artifact.account);
  recheck();
  return buildL2Headers({
    address: creds.info.account,
    credentials: creds,
    timestamp: artifact.timestamp,
    method: artifact.method,
    requestPath: artifact.requestPath,
    ...(artifact.body === undefined ? {} : { body: artifact.body }),
  });
}
