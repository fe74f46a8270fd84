/**
 * An account's order-book API credentials, for the signing service (`./service.ts`): created (or, when the nonce is
 * used, derived) with ClobAuth signatures of the guarded owner key, stored in the vault, and rotated (the old key
 * deleted at the exchange with an L2 request, new credentials under the next unused nonce).
 */
import type { LocalAccount } from 'viem';
import { createOrDeriveApiKey } from '../clob/client';
import { ClobError } from '../clob/errors';
import type { AuthorityTicket } from '../authority/epoch';
import type { Held } from '../authority/guard';
import type { ClobInfo, Vault } from '../vault/vault';
import type { GatewaySettings } from './options';

/** How many nonces after the stored one `ClobCredentials.rotate` tries before it gives up. */
const ROTATE_NONCE_TRIES = 10;

/**
 * What the credentials need: the vault (stored credentials), the gateway settings (read per call), the gateway
 * transport `fetchFn`, the clock `now` (Unix ms), `ownerKey` (the service's guarded owner key and its `check`:
 * `SigningService.ownerKey`) and `l2` (one gated, L2-signed order-book request: `Submitter.l2`).
 */
export type ClobCredentialsDeps = {
  vault: Vault;
  settings: () => Promise<GatewaySettings>;
  fetchFn: typeof fetch;
  now: () => number;
  ownerKey: (account: string, ticket: AuthorityTicket) => Promise<{ owner: LocalAccount; check: () => void }>;
  l2: (account: string, method: string, requestPath: string, body: unknown, opts: Held) => Promise<unknown>;
};

/** Creates, stores and rotates an account's order-book API credentials (see the module docstring). */
export class ClobCredentials {
  constructor(private readonly d: ClobCredentialsDeps) {}

  /**
   * Creates (or, when the nonce is used, derives) CLOB credentials for `account` and stores them. Each
   * ClobAuth signature is made with the guarded owner key (`ownerKey`: the gate and `opts.authority` checked
   * right before it), and checked again right before its request. Throws `HaltedError`, the ticket's ended error
   * (`endedError`), `VenueNotConfirmedError`, the exchange's `ClobError`.
   */
  async createOrDerive(account: string, opts: { nonce?: number } & Held) {
    const { credentials, derived } = await this.keyAt(account, opts);
    return { info: await this.store(account, credentials, opts.nonce ?? 0), derived };
  }

  /**
   * Creates (or, when the nonce is used, derives) `account`'s CLOB credentials under `opts.nonce` (default 0), storing
   * nothing (see `createOrDerive`).
   */
  private async keyAt(account: string, opts: { nonce?: number } & Held) {
    const { owner, check } = await this.d.ownerKey(account, opts.authority);
    const { clobUrl, clobChainId } = await this.d.settings();
    return createOrDeriveApiKey(
      clobUrl,
      owner,
      { chainId: clobChainId, timestamp: Math.floor(this.d.now() / 1000), nonce: opts.nonce ?? 0 },
      this.d.fetchFn,
      check, // before each ClobAuth signature and its request (the derive after a refused create too)
    );
  }

  /**
   * Stores `credentials` (under `nonce`) as `account`'s, keeping the signature type and funder of an account already
   * set up.
   */
  private async store(
    account: string,
    credentials: Awaited<ReturnType<typeof createOrDeriveApiKey>>['credentials'],
    nonce: number,
  ): Promise<ClobInfo> {
    // The same owner derives the same key whatever the signature type: an account already set up keeps its
    // type and funder (a deposit-wallet account is never turned back into type 0 by re-deriving its key).
    const kept = (await this.d.vault.hasClobCredentials(account))
      ? (await this.d.vault.clobCredentials(account)).info
      : undefined;
    return this.d.vault.putClobCredentials({
      account,
      ...credentials,
      nonce,
      ...(kept ? { signatureType: kept.signatureType, funder: kept.funder } : {}),
    });
  }

  /**
   * Replaces `account`'s CLOB credentials: deletes the stored key at the exchange (`DELETE /auth/api-key`,
   * L2-signed with it; a key the exchange no longer knows counts as deleted), then creates credentials
   * under the next nonce the exchange has not used (a used nonce derives an existing key, possibly the
   * exposed one, never stored: up to `ROTATE_NONCE_TRIES` nonces are tried) and stores them. `oldDeleted` false: the
   * exchange refused the delete (the new credentials are still stored; the old key may stay valid). Throws what
   * `createOrDerive` throws, and `ClobError` when every nonce tried was used: then the vault keeps the old
   * credentials (deleted at the exchange when `DELETE` succeeded: the error says which) and the person creates new ones
   * under another nonce.
   */
  async rotate(account: string, opts: Held): Promise<{ info: ClobInfo; oldDeleted: boolean }> {
    const { info: old } = await this.d.vault.clobCredentials(account);
    const oldDeleted = await this.d.l2(account, 'DELETE', '/auth/api-key', undefined, opts).then(
      () => true,
      (err: unknown) => {
        if (err instanceof ClobError && err.status === 401) return true; // the exchange no longer knows the key
        if (err instanceof ClobError) return false;
        throw err;
      },
    );
    // A used nonce derives a key that already exists (possibly the exposed one): it is never stored.
    for (let nonce = old.nonce + 1; nonce <= old.nonce + ROTATE_NONCE_TRIES; nonce++) {
      const { credentials, derived } = await this.keyAt(account, { nonce, authority: opts.authority });
      if (!derived) return { info: await this.store(account, credentials, nonce), oldDeleted };
    }
    const oldWords = oldDeleted
      ? 'The old API key was deleted at the exchange, so order-book requests fail until new credentials exist'
      : 'The old API key could not be deleted at the exchange and may still be valid';
    throw new ClobError(
      `No unused API key nonce between ${old.nonce + 1} and ` +
        `${old.nonce + ROTATE_NONCE_TRIES}: no new credentials were created. ${oldWords}.`,
      { status: 400, exchangeMessage: '' },
    );
  }
}
