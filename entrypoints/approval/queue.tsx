/**
 * The approval queue: shows the oldest pending request; Approve arms only after the window has had
 * focus for 1 s and disarms on blur (clickjacking). The decision carries the request id and the digest
 * shown. Used by the approval window and by the popup when approvals are pending.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApprovalView, type ApprovalViewData } from '../../components/ApprovalView';
import { ErrorText, Notice } from '../../components/ui';
import { GrantForm, type GrantFormLimits } from '../../components/GrantForm';
import type { GrantOffer } from '../../lib/grants/offer';
import type { createCaller } from '../../lib/messaging/client';

export const ARM_DELAY_MS = 1_000;

/**
 * `reportShown`: the approval window tells the background which request (id, digest) it displays, so
 * closing the window rejects that request only (issue #17 §10). The popup's copy of the queue does not.
 */
export function ApprovalQueue({ call, onEmpty, reportShown = false }: { call: ReturnType<typeof createCaller>; onEmpty: () => void; reportShown?: boolean }) {
  const [queue, setQueue] = useState<ApprovalViewData[] | undefined>();
  const [armed, setArmed] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const [now, setNow] = useState(Date.now());
  const [granting, setGranting] = useState<GrantOffer | undefined>();
  const [granted, setGranted] = useState<string>();
  const armTimer = useRef<ReturnType<typeof setTimeout>>();
  const head = queue?.[0];

  const load = async () => {
    const list = await call<'approval.list', ApprovalViewData[]>('approval.list', {});
    setQueue(list);
    if (list.length === 0) onEmpty();
  };

  // Arm after 1 s of focus on the request being shown; disarm on blur or when the request changes.
  const arm = () => {
    clearTimeout(armTimer.current);
    setArmed(false);
    if (document.hasFocus()) armTimer.current = setTimeout(() => setArmed(true), ARM_DELAY_MS);
  };
  useEffect(() => {
    const onFocus = () => arm();
    const onBlur = () => {
      clearTimeout(armTimer.current);
      setArmed(false);
    };
    window.addEventListener('focus', onFocus);
    window.addEventListener('blur', onBlur);
    const t = setInterval(() => {
      setNow(Date.now());
      void load().catch(() => undefined);
    }, 1_000);
    void load();
    return () => {
      window.removeEventListener('focus', onFocus);
      window.removeEventListener('blur', onBlur);
      clearInterval(t);
      clearTimeout(armTimer.current);
    };
  }, []);
  // A refreshed artifact (new digest) must be looked at again: re-arm.
  useEffect(() => arm(), [head?.id, head?.digest]);
  useEffect(() => {
    if (reportShown && head) void call('approval.showing', { id: head.id, digest: head.digest }).catch(() => undefined);
  }, [head?.id, head?.digest]);
  useEffect(() => {
    setGranting(undefined);
    setGranted(undefined);
  }, [head?.id]);

  /** Fetches the grant offer (venue, names, equity, proposed caps) for the request shown. */
  const offer = async () => {
    if (!head) return;
    setError(undefined);
    try {
      setGranting(await call<'grant.offer', GrantOffer>('grant.offer', { approvalId: head.id }));
    } catch (err) {
      setError((err as { shortMessage?: string }).shortMessage ?? 'The permission cannot be offered for this request.');
    }
  };

  const decide = async (approve: boolean) => {
    if (!head || busy) return;
    if (approve && !armed) return;
    setBusy(true);
    setError(undefined);
    try {
      await call('approval.decide', { id: head.id, approve, ...(approve ? { digest: head.digest } : {}) });
    } catch (err) {
      setError((err as { shortMessage?: string }).shortMessage ?? 'That request is no longer pending.');
    } finally {
      setBusy(false);
      await load();
    }
  };

  const grant = async (limits: GrantFormLimits, minutes: number) => {
    if (!head) return;
    setError(undefined);
    try {
      await call('grant.create', { approvalId: head.id, limits, minutes });
      setGranting(undefined);
      setGranted(`Saved for ${minutes / 60} h. Approve this request to send it; later requests within the limits will not ask.`);
    } catch (err) {
      setError((err as { shortMessage?: string }).shortMessage ?? 'The permission could not be saved.');
    }
  };

  if (!queue) return <main class="panel">Loading…</main>;
  if (!head) return <main class="panel"><Notice>Nothing is waiting for your approval.</Notice></main>;
  return (
    <main class="panel">
      <ApprovalView view={head} armed={armed} busy={busy} queueLength={queue.length} now={now} onApprove={() => void decide(true)} onReject={() => void decide(false)} />
      <ErrorText error={error} />
      {granted ? <Notice>{granted}</Notice> : null}
      {head.grantable && !granted ? (
        granting ? (
          <GrantForm offer={granting} onSubmit={(l, m) => void grant(l, m)} />
        ) : (
          <button type="button" class="link" onClick={() => void offer()}>Allow this site within limits…</button>
        )
      ) : null}
    </main>
  );
}
