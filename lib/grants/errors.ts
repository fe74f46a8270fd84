/**
 * The errors of a grant refused at its creation, each with its EIP-1474 code (nothing is created):
 * `GrantService.create` (`./service.ts`) throws both, the grant procedures (`lib/background/procedures/grants.ts`)
 * `GrantLimitsError` too. A revoked grant's error is the authority epoch's (`GrantRevokedError`,
 * `lib/authority/epoch.ts`, re-exported by `./service.ts`).
 */
import { BaseError } from '../errors/base';

/** Thrown when a grant would last longer than 24 h or not at all. */
export class GrantDurationError extends BaseError {
  override name = 'Grants.DurationError';
  /** EIP-1474 -32602 "invalid params": the expiry asked for is out of range (nothing created). */
  static override readonly code: number | undefined = -32602;
  constructor() {
    super('A standing permission lasts from 1 minute to 24 hours.');
  }
}

/**
 * Thrown by `GrantService.create` when the limits are missing or invalid (venue, instruments
 * / markets, per-order cap, 24 h cap and price band are required). `field` names it (`limits.maxNotional`).
 */
export class GrantLimitsError extends BaseError {
  override name = 'Grants.LimitsError';
  static override readonly code = -32602;
  readonly field: string;
  constructor({ field, reason }: { field: string; reason: string }) {
    super(`The permission cannot be saved: ${field} ${reason}.`, { data: { field } });
    this.field = field;
  }
}
