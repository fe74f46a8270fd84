/**
 * The perps domain pin ("Venue presets"): the EIP-712 command domain the keys sign on is
 * the one the settings pin (`perpsDomain` name and version, `clobChainId` — the preset's chain), never
 * whatever a gateway's exchange-info read reports (PROTOCOL.md §1.1). A gateway that reports another
 * domain gets nothing signed.
 */
import { BaseError } from '../errors/base';

/** The pinned domain: `name`, `version` (the settings' `perpsDomain`) and `chainId` (`clobChainId`). */
export type PinnedPerpsDomain = { name: string; version: string; chainId: number };

/**
 * Thrown before a perps signature when the gateway's exchange-info domain differs from the pinned one.
 * `data` names both (`pinned*`, `gateway*`). Nothing was signed or sent.
 */
export class PerpsDomainMismatchError extends BaseError {
  override name = 'Settings.PerpsDomainMismatchError';
  /** EIP-1474 -32002 "resource unavailable": this gateway cannot be signed for as configured (nothing sent). */
  static override readonly code: number | undefined = -32002;
  constructor(pinned: PinnedPerpsDomain, gateway: PinnedPerpsDomain) {
    const show = (d: PinnedPerpsDomain) => `"${d.name}" version "${d.version}" on chain ${d.chainId}`;
    super(
      `Refused to sign: the perps gateway asks for the domain ${show(gateway)}, ` +
        `but Settings pin ${show(pinned)}. A gateway never chooses what the keys sign.`,
      {
        metaMessages: ['Check the preset in Settings (or the pinned domain of a custom setup).'],
        data: {
          pinnedName: pinned.name,
          pinnedVersion: pinned.version,
          pinnedChainId: pinned.chainId,
          gatewayName: gateway.name,
          gatewayVersion: gateway.version,
          gatewayChainId: gateway.chainId,
        },
      },
    );
  }
}

/**
 * Throws `PerpsDomainMismatchError` unless `gateway` (the exchange-info read) equals `pinned` in name, version and
 * chain id.
 */
export function assertPinnedPerpsDomain(pinned: PinnedPerpsDomain, gateway: PinnedPerpsDomain): void {
  if (gateway.name !== pinned.name || gateway.version !== pinned.version || gateway.chainId !== pinned.chainId)
    throw new PerpsDomainMismatchError(pinned, gateway);
}
