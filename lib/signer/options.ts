/**
 * What the signing service is configured with (`SigningServiceOptions`, `GatewaySettings`) and what one
 * signing call passes (`ExecuteOptions`). Shared by the service's parts (`./prepare.ts`, `./submit.ts`,
 * `./service.ts`).
 */
import type { TransportRule } from '../settings/transport';
import type { HeaderSet } from '../http/headers';
import type { ConfirmationSettings } from '../settings/confirmation';
import type { PerpsSessionTransport } from '../perps/transport';
import type { AuditJournal } from '../audit/journal';
import type { UseReservation } from '../grants/ledger';
import type { Authority } from '../authority/epoch';
import type { Held } from '../authority/guard';
import type { WeightMeter } from '../ratelimit/meter';
import type { VenueReads } from '../reads/venue-reads';
import type { VaultDb } from '../vault/db';
import type { Vault } from '../vault/vault';
import type { GateOptions } from './gate';

/**
 * Gateway settings (the settings store). URLs are service roots; `headerSet` names the auth headers
 * (default `seed`); `perpsDomain` the pinned perps domain's name and version (its chain is `clobChainId`;
 * absent: the default pin — never "whatever the gateway says"); the preset and its real-money
 * confirmations (`ConfirmationSettings`).
 */
export type GatewaySettings = {
  perpsUrl: string;
  clobUrl: string;
  clobChainId: number;
  headerSet?: HeaderSet;
  relayerUrl?: string;
  rpcUrl?: string;
  perpsDomain?: { name: string; version: string };
} & ConfirmationSettings;

/**
 * What the signing service needs: the vault (keys), its database (audit log), the gateway settings (read
 * per call), and test seams — `fetchFn` (transport), `now` (Unix ms), `sleep` (retry back-off, ms).
 */
export type SigningServiceOptions = {
  vault: Vault;
  db: VaultDb;
  settings: () => Promise<GatewaySettings>;
  fetchFn?: typeof fetch;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
  /** Deadline of each gateway request (ms); default `DEFAULT_REQUEST_TIMEOUT_MS` (15 s). */
  requestTimeoutMs?: number;
  /** Which transports may carry a signature or a secret (`lib/settings/transport.ts`); default this build's. */
  transportRule?: TransportRule;
  /**
   * The account's live perps session for the perps URL `perpsUrl`, when the background holds one:
   * submitted commands it can carry go over it, the rest and the fallback over REST
   * (`lib/perps/transport.ts`). None: REST only.
   */
  session?: (account: string, perpsUrl: string) => PerpsSessionTransport | undefined;
  /**
   * Called when the audit entry of a submission the venue answered could not be written (`what` the kind
   * of submission, `err` the store's error): the answer already went back, so the person is told (the
   * background raises a notification). Default: nothing.
   */
  onUnrecorded?: (what: string, err: unknown) => void;
  /**
   * The audit journal (`lib/audit/journal.ts`): a record of each submission, stored before it is sent
   * and closed once its audit entry is written, so a worker that stops in between leaves a trace the next
   * one records. None (tests, Node): no journal.
   */
  journal?: AuditJournal;
  /** The background's one authority epoch (`lib/authority/epoch.ts`), shared with the grants and the provider. */
  authority: Authority;
  /**
   * The gateways' weight meter, shared with the venue reads (`lib/ratelimit/meter.ts`). Default: a meter
   * of this service's own, shared with its default reads.
   */
  meter?: WeightMeter;
  /**
   * The venue reads the service builds orders with (tick size, negative-risk flag) — the background's
   * (`lib/reads/venue-reads.ts`), built on the same `meter`. Default: reads of this service's own.
   */
  reads?: VenueReads;
};

/**
 * Options of `execute`: the audit's origin and summary, `audit: false` (the dead-man's renewals only),
 * `grantUse` (a submission covered by a grant: the use's reservation, `lib/grants/ledger.ts`), and the
 * gate's. A submission with a `grantUse` leaves only once `grantUse.durable`: its audit journal record
 * is opened through `grantUse.carry` and carries the use (the vault write runs beside the network round
 * trip); with no journal, the durable note is the use's vault write.
 */
export type ExecuteOptions = {
  origin: string;
  summary?: string;
  audit?: boolean;
  grantUse?: UseReservation;
} & GateOptions &
  Held;
