/**
 * The perps methods: `perps_sendCommand` (sign and submit a command to the perps gateway) and
 * `perps_signCommand` (sign only; the page submits). A page names *what* it wants — a command (`op`,
 * built and validated by `commandFromBody`) — never bytes to sign; sites cannot issue proxy keys, and
 * funds move only from the connected account.
 *
 * `perps_sendCommand` is keyed (`idempotency.ts`) and covered by the origin's perps grant when it is
 * within it (`coverage.ts`); otherwise, and always for `perps_signCommand` (the site would hold a signed
 * command to submit at any time), it asks (`consent.ts`).
 */
import * as v from 'valibot';
import { InvalidFieldError } from '../validation';
import { unsupported } from '../errors/rpc';
import type { OwnedOrder } from '../grants/evaluate';
import { perpsGrantRequest } from '../grants/requests';
import { commandFromBody } from '../perps/commands';
import { describeArtifact, perpsArtifactCommand } from '../signer/artifact';
import type { OwnerInfo } from '../vault/vault';
import { TTL_FUNDS_MS, TTL_TRADING_MS, type Consent } from './consent';
import { connectedAccount, type PageRequest, type ProviderDeps } from './context';
import { NOT_COVERED, type Coverage } from './coverage';
import { fundsArgs, orderArgs, perpsFlags, rememberDestination } from './flags';
import { perpsSubmissionKeys, type BeforeSign, type Submissions } from './idempotency';
import type { PerpsParams } from './params';
import type { PageReads } from './reads';

/** What the perps methods use (one instance each, shared with the other families). */
export type PerpsParts = {
  d: ProviderDeps;
  consent: Consent;
  coverage: Coverage;
  reads: PageReads;
  submissions: Submissions;
};

/** The perps page methods (see the module docstring). */
export class PerpsMethods {
  constructor(private readonly c: PerpsParts) {}

  /** `perps_sendCommand`: the gateway's answer to the signed command (createOrders: one ack per order). */
  send(req: PageRequest, p: PerpsParams): Promise<unknown> {
    const account = connectedAccount(req);
    return this.c.submissions.keyed(perpsSubmissionKeys(req.origin, account.address, p), p, (beforeSign) =>
      this.run(req, account, true, p, beforeSign),
    );
  }

  /** `perps_signCommand`: the signed command for the page to submit (never covered by a grant). */
  sign(req: PageRequest, p: PerpsParams): Promise<unknown> {
    return this.run(req, connectedAccount(req), false, p);
  }

  private async run(
    req: PageRequest,
    account: OwnerInfo,
    submit: boolean,
    p: PerpsParams,
    beforeSign?: BeforeSign,
  ): Promise<unknown> {
    const { d, consent, coverage, reads } = this.c;
    const { origin, ticket } = req;
    const cmd = commandFromBody(p.op, p.label);
    if (cmd.type === 'createProxy') throw unsupported('Sites cannot issue proxy keys; use the extension.');
    const funds = cmd.type === 'withdraw' || cmd.type === 'internalTransfer';
    const fundsTo = funds ? v.parse(fundsArgs, cmd.body.args) : undefined;
    if (fundsTo && fundsTo.account.toLowerCase() !== account.address.toLowerCase()) {
      throw new InvalidFieldError({ field: 'op.args.account', reason: 'must be the connected account' });
    }
    /** The client order ids this command sends (createOrders): no grant but the one placing them owns them after. */
    const sentCoids =
      cmd.type === 'createOrders' ? v.parse(orderArgs, cmd.body.args).flatMap((o) => (o.c ? [o.c] : [])) : [];
    const prepare = () =>
      d.service.preparePerps(account.address, cmd, { submit, ...(p.exp === undefined ? {} : { exp: p.exp }) });
    // The proxy key a covered command signs with is opened before a grant counts a use (answered from memory
    // when held, `lib/vault/held-keys.ts`): without one (deleted, expired, not kept) nothing is covered or counted, and
    // the request goes the window's way, which says why it cannot be signed.
    const keyed =
      cmd.signer !== 'proxy' ||
      (await d.vault.proxyFor(account.address).then(
        () => true,
        () => false,
      ));
    // perps_signCommand is never covered: the site would hold a signed command to submit at any time.
    const check =
      submit && keyed
        ? await coverage.check(origin, account, perpsGrantRequest(cmd), (m) => reads.perpsRef(m), ticket)
        : NOT_COVERED;
    return coverage.coveredOrAsk(check, 'send', {
      covered: async (grant, beforeSend) => {
        const [symbol, steps] = [reads.symbol(), reads.steps()]; // read while the artifact is built
        const artifact = await prepare();
        const { lines } = describeArtifact(artifact, await symbol, await steps);
        // Client order ids sent under this grant are no other grant's to cancel (another site's grant must never reach
        // this order).
        await coverage.forgetCoids(origin, account.address, sentCoids, grant.grantId);
        await beforeSign?.(artifact);
        const result = await d.service.execute(artifact, artifact.digest, {
          origin,
          summary: `${lines[0] ?? cmd.type} (standing permission)`,
          still: grant.still,
          ...(beforeSend ? { beforeSend } : {}),
          grantUse: grant.use,
          authority: grant.authority,
        });
        // Recorded after the answer (best effort), before the next grant check (`recordOrdersAfter`).
        if (cmd.type === 'createOrders') coverage.recordOrdersAfter(grant.grantId, grant.seq, ackedOrders(result));
        return result;
      },
      ask: async (flag) => {
        // A client order id the site sends outside its grant is no longer the grant's to cancel.
        await coverage.forgetCoids(origin, account.address, sentCoids);
        const view = await consent.approve({
          origin,
          kind: 'perps',
          account,
          build: prepare,
          flagsFor: async (a) => [
            ...(flag ? [flag] : []),
            ...(a.kind === 'perps' ? await perpsFlags(d, account.address, perpsArtifactCommand(a)) : []),
          ],
          ttlMs: funds ? TTL_FUNDS_MS : TTL_TRADING_MS,
          ticket,
        });
        await beforeSign?.(view.artifact);
        const result = await d.service.execute(view.artifact, view.digest, {
          origin,
          summary: view.lines[0] ?? cmd.type,
          authority: view.authority,
        });
        // Best effort: the funds were sent and answered; a failed write must not turn the answer into an error a client
        // retries.
        if (fundsTo && submit) await rememberDestination(d, fundsTo.to).catch(() => undefined);
        return result;
      },
    });
  }
}

/**
 * The orders a perps createOrders answer accepted (`status: ok` with an integer `oid`), with their client order ids.
 */
function ackedOrders(result: unknown): OwnedOrder[] {
  if (!Array.isArray(result)) return [];
  return result.flatMap((a) => {
    if (typeof a !== 'object' || a === null || !('status' in a) || a.status !== 'ok' || !('oid' in a)) return [];
    const { oid } = a;
    if (typeof oid !== 'number' || !Number.isSafeInteger(oid) || oid < 0) return [];
    return [
      { oid, ...('coid' in a && typeof a.coid === 'string' && /^[0-9a-f]{32}$/.test(a.coid) ? { coid: a.coid } : {}) },
    ];
  });
}
