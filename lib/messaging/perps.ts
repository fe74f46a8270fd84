/**
 * Contract of the perps procedures the popup calls with the active account's keys (PROTOCOL.md §1):
 * a signed command (the click is the consent) and the gateway's reads.
 */
import * as v from 'valibot';
import { address, nonNegativeSafeInteger } from '../validation';
import { PERPS_READ_ANSWERS, perpsCommandAnswerSchema, perpsReadAnswerSchema } from '../perps/wire';
import { EXT, POPUP, procedure } from './procedure';

const perpsOp = v.strictObject({
  type: v.string('must be a command type'),
  args: v.unknown(),
  grp: v.optional(v.unknown()),
});

/** Perps procedures. */
export const PERPS_CONTRACT = {
  /**
   * Signs and submits one command for the active account; answers the gateway's success body, whose
   * shape depends on the command (order acks, `withdraw_id`, `transfer_id` …; seed "Endpoints";
   * `perpsCommandAnswerSchema`). `createProxy` is refused (its answer carries the proxy secret). Throws the gateway's
   * typed error, `Signer.WeightBudgetError`, `Signer.OutcomeUnknownError`.
   */
  'perps.send': procedure({
    input: v.strictObject({
      account: address,
      op: perpsOp,
      label: v.optional(v.unknown()),
      exp: v.optional(nonNegativeSafeInteger),
    }),
    output: perpsCommandAnswerSchema,
    senders: POPUP,
    activity: true,
  }),
  /**
   * One gateway read (`PERPS_READS`), with the account's proxy headers when it needs them; the answer
   * validated by `PERPS_READ_ANSWERS[name]` in the background (narrow it with the same schema). The
   * approval window reads too: it shows an order's numbers computed from these reads.
   */
  'perps.read': procedure({
    input: v.strictObject({
      account: v.optional(address),
      name: v.keyof(v.object(PERPS_READ_ANSWERS)),
      query: v.optional(
        v.record(
          v.pipe(v.string(), v.regex(/^[a-z0-9_]{1,32}$/)),
          v.union([v.pipe(v.string(), v.maxLength(100)), nonNegativeSafeInteger]),
        ),
      ),
    }),
    output: perpsReadAnswerSchema,
    senders: EXT,
    activity: false,
  }),
} as const;
