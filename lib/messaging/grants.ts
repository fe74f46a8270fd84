/**
 * Contract of the standing-grant procedures: offer and create (from the approval window, for
 * the request it shows), list, revoke, and the dead-man switches that guard live grants.
 */
import * as v from 'valibot';
import { grantLimitsSchema } from '../grants/schema';
import { done, EXT, noInput, POPUP, procedure, shortId } from './procedure';

const allow = v.object({
  order: v.boolean(),
  cancel: v.optional(v.boolean()),
  leverage: v.optional(v.boolean()),
  market: v.optional(v.boolean()),
  triggers: v.optional(v.boolean()),
});
const common = {
  allow,
  maxNotional: v.string(),
  dailyNotional: v.string(),
  priceBandPct: v.string(),
  maxSize: v.optional(v.string()),
  postOnly: v.optional(v.boolean()),
  ratePerMinute: v.optional(v.number()),
  id: v.string(),
  origin: v.string(),
  account: v.string(),
  createdAt: v.number(),
  expiresAt: v.number(),
  names: v.optional(v.record(v.string(), v.string())),
};

/**
 * A standing grant (`Grant` of lib/grants/evaluate): its limits (USDC decimal strings, percentages),
 * site, account, times (Unix ms) and display names of its instruments / markets.
 */
const grantSchema = v.variant('venue', [
  v.object({
    venue: v.literal('perps'),
    instruments: v.array(v.number()),
    slippagePct: v.string(),
    maxLeverage: v.optional(v.number()),
    reduceOnly: v.optional(v.boolean()),
    ...common,
  }),
  v.object({ venue: v.literal('clob'), markets: v.array(v.string()), ...common }),
]);

/** A grant with its use over the last 24 h (`used24h` USDC decimal string, `uses24h` count). */
const grantSummarySchema = v.intersect([grantSchema, v.object({ used24h: v.string(), uses24h: v.number() })]);

/**
 * What the window offers (`GrantOffer` of lib/grants/offer): venue, named scope, equity (USDC or null), proposed
 * limits.
 */
const grantOfferSchema = v.object({
  venue: v.picklist(['perps', 'clob']),
  markets: v.array(v.object({ id: v.string(), name: v.string() })),
  equity: v.nullable(v.string()),
  proposal: v.object({
    maxNotional: v.optional(v.string()),
    dailyNotional: v.optional(v.string()),
    priceBandPct: v.string(),
    slippagePct: v.optional(v.string()),
  }),
});

/** One venue's dead-man switch (`DeadManVenueStatus` of lib/background/deadman); times Unix ms. */
const deadManVenueSchema = v.object({
  venue: v.picklist(['perps', 'clob']),
  account: v.string(),
  armed: v.boolean(),
  since: v.number(),
  renewals: v.number(),
  lastRenewal: v.optional(v.number()),
  perpsCancelAt: v.optional(v.number()),
  lastHeartbeat: v.optional(v.number()),
  error: v.optional(v.string()),
});

/** Grant procedures. */
export const GRANT_CONTRACT = {
  /** Creates a grant for the pending request `approvalId` (its origin and account, never the message's). */
  'grant.create': procedure({
    input: v.strictObject({
      approvalId: shortId,
      limits: grantLimitsSchema,
      minutes: v.pipe(v.number(), v.safeInteger(), v.minValue(1), v.maxValue(24 * 60)),
    }),
    output: grantSchema,
    senders: EXT,
    activity: true,
  }),
  'grant.offer': procedure({
    input: v.strictObject({ approvalId: shortId }),
    output: grantOfferSchema,
    senders: EXT,
    activity: false,
  }),
  'grant.list': procedure({ input: noInput, output: v.array(grantSummarySchema), senders: POPUP, activity: false }),
  'grant.revoke': procedure({ input: v.strictObject({ id: shortId }), output: done, senders: POPUP, activity: true }),
  /** The kill switches: `armed` when at least one is live, one row per switch. */
  'deadman.status': procedure({
    input: noInput,
    output: v.object({ armed: v.boolean(), venues: v.array(deadManVenueSchema) }),
    senders: POPUP,
    activity: false,
  }),
} as const;
