/**
 * Which settings name the venue a signature is for and where it goes (PROTOCOL.md §1.1 domain, the
 * gateways' URLs, the chain id, the header set) — changing one ends the authority of everything started
 * before it (`lib/authority/epoch.ts`, scope `all`, reason `venue`). Exhaustive: a new settings field does
 * not compile until it is classed here.
 */
import type { Settings } from './index';

/**
 * Every settings field, `true` when it is a venue field. The catalogue (`gammaUrl`) and data service
 * (`dataUrl`) count: what they answer is shown in approval windows and used to build orders. The
 * person's own limits and preferences (auto-lock, theme, audit retention, position cap, slippage) and
 * the list of confirmed presets do not change the venue.
 */
export const VENUE_FIELDS: Readonly<Record<keyof Settings, boolean>> = {
  preset: true,
  perpsUrl: true,
  perpsWsUrl: true,
  clobUrl: true,
  clobWsUrl: true,
  bridgeUrl: true,
  perpsDomain: true,
  confirmedPresets: false,
  gammaUrl: true,
  dataUrl: true,
  relayerUrl: true,
  rpcUrl: true,
  clobChainId: true,
  autoLockMinutes: false,
  theme: false,
  headerSet: true,
  auditRetentionDays: false,
  maxPositionUsdc: false,
  slippageBps: false,
  venueChosen: true,
};

/** Whether `next` names another venue than `current` (any venue field differs; compared by value). */
export function venueChanged(current: Settings, next: Settings): boolean {
  return (Object.keys(VENUE_FIELDS) as (keyof Settings)[]).some(
    (f) => VENUE_FIELDS[f] && JSON.stringify(current[f]) !== JSON.stringify(next[f]),
  );
}
