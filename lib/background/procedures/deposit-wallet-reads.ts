/**
 * What the deposit wallet's status (`clob.depositWallet.status`, ./deposit.ts) reads at the venues: its
 * positions (the data service: the redeemable ones, one outcome token it holds) and its approvals of the
 * exchanges (the order book's balance-allowance read). Neither throws: an answer out of shape reads as none
 * or `unknown`.
 */
import * as v from 'valibot';
import { requestJson } from '../../http/json';
import { venueContracts } from '../../relayer/contracts';

const positionsSchema = v.object({
  data: v.pipe(
    v.array(
      v.looseObject({
        condition_id: v.pipe(v.string(), v.regex(/^0x[0-9a-fA-F]{64}$/)),
        token_id: v.optional(v.pipe(v.string(), v.regex(/^\d{1,80}$/))),
        title: v.pipe(v.string(), v.maxLength(300)),
        outcome: v.pipe(v.string(), v.maxLength(60)),
        current_size: v.pipe(v.string(), v.maxLength(64)),
        redeemable: v.boolean(),
      }),
    ),
    v.maxLength(500),
  ),
});

/**
 * The deposit wallet's positions (data v2 `GET /v2/positions?user=<wallet>`): the redeemable ones, and the
 * token id of one it holds, unresolved (`heldToken`, for the outcome-token approval check); none when
 * the data service does not answer in shape.
 */
export async function walletPositions(
  dataUrl: string,
  wallet: string,
  fetchFn: typeof fetch,
): Promise<{
  redeemable: { conditionId: string; title: string; outcome: string; size: string }[];
  heldToken: string | undefined;
}> {
  const answer = await requestJson(
    `${dataUrl}/v2/positions?user=${wallet}&limit=100`,
    { method: 'GET' },
    fetchFn,
  ).catch(() => undefined);
  const p = v.safeParse(positionsSchema, answer?.body);
  if (!p.success) return { redeemable: [], heldToken: undefined };
  const held = p.output.data.filter((r) => r.current_size !== '0' && !/^0(\.0*)?$/.test(r.current_size));
  return {
    redeemable: held
      .filter((r) => r.redeemable)
      .map((r) => ({ conditionId: r.condition_id, title: r.title, outcome: r.outcome, size: r.current_size })),
    heldToken: held.find((r) => !r.redeemable && r.token_id !== undefined)?.token_id,
  };
}

const allowanceSchema = v.object({
  allowances: v.record(v.pipe(v.string(), v.maxLength(64)), v.pipe(v.string(), v.regex(/^\d{1,80}$/))),
});

/**
 * Whether the deposit wallet approved the exchanges, as the venue reads it: the order book's
 * `GET /balance-allowance?asset_type=COLLATERAL&signature_type=3` (L2, PROTOCOL.md §4.5 "Balance") lists
 * the wallet's collateral allowance per exchange; when the wallet holds outcome tokens (`heldToken`, one
 * of them), `asset_type=CONDITIONAL&token_id=<it>` lists its outcome-token approval (`setApprovalForAll`
 * on ConditionalTokens, per exchange, the same for every token) — without tokens there is nothing to sell,
 * so that approval is not asked. `approved` when exchange V2 and negative-risk exchange V2 both have every
 * allowance asked; `missing` when one is zero; `unknown` when the venue cannot be asked (no API
 * credentials, vault locked, panic, no answer, another shape). `read` is the signing service's `clobRead` for the
 * account (an L2-signed GET through the signing gate, under the person's authority), its 2xx body unvalidated.
 */
export async function venueApprovals(
  chainId: number,
  heldToken: string | undefined,
  read: (requestPath: string) => Promise<unknown>,
): Promise<'approved' | 'missing' | 'unknown'> {
  try {
    const c = venueContracts(chainId);
    const allows = async (query: string): Promise<boolean | undefined> => {
      const answer = await read(`/balance-allowance?${query}&signature_type=3`);
      const p = v.safeParse(allowanceSchema, answer);
      if (!p.success) return undefined;
      const of = (spender: string) =>
        BigInt(
          Object.entries(p.output.allowances).find(([k]) => k.toLowerCase() === spender.toLowerCase())?.[1] ?? '0',
        );
      return of(c.exchangeV2) > 0n && of(c.negRiskExchangeV2) > 0n;
    };
    const collateral = await allows('asset_type=COLLATERAL');
    if (collateral !== true) return collateral === undefined ? 'unknown' : 'missing';
    if (heldToken === undefined) return 'approved';
    const outcome = await allows(`asset_type=CONDITIONAL&token_id=${heldToken}`);
    return outcome === undefined ? 'unknown' : outcome ? 'approved' : 'missing';
  } catch {
    return 'unknown';
  }
}
