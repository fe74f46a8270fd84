/**
 * The foot of the perps ticket (sticky under the summary): why the order cannot be built,
 * the error, then Buy / Sell (the ticket's summary of the order, in the perps venue's words: `perpsTicketWords`) and
 * Close position, then the venue's answer in a live region that exists before its text. `TicketMeta` is the client
 * order id and weights line shown below the sticky part. Presentational: strings in, clicks out; Buy / Sell is the
 * form's submit.
 */
import { perpsTicketWords } from '../../lib/perps/words';
import { Button, ErrorText, Live } from '../ui';

/** Props: `weights` of the built command (1 / 1 without one); `spend` the reads of the last minute. */
export type TicketFooterProps = {
  coid: string;
  weights: { request: number; action: number } | undefined;
  spend: number;
  problem: string | undefined;
  error: string | undefined;
  result: string | undefined;
  buy: boolean;
  contracts: string;
  symbol: string;
  price: string;
  /** The instrument's tick and lot (decimal strings), when known: the summary's price and size are padded to them. */
  tick?: string | undefined;
  lot?: string | undefined;
  canSubmit: boolean;
  hasPosition: boolean;
  onClosePosition: () => void;
};

/** Notices and actions. */
export function TicketFooter(props: TicketFooterProps) {
  return (
    <>
      {props.problem ? <p class="warn">{props.problem}</p> : null}
      <ErrorText error={props.error} />
      <div class="actions submit-row">
        <Button kind={props.buy ? 'primary' : 'danger'} type="submit" disabled={!props.canSubmit} data-testid="submit">
          {perpsTicketWords({
            buy: props.buy,
            contracts: props.contracts,
            symbol: props.symbol,
            price: props.price,
            ...(props.tick ? { tick: props.tick } : {}),
            ...(props.lot ? { lot: props.lot } : {}),
          })}
        </Button>
        {props.hasPosition ? (
          <Button onClick={props.onClosePosition} data-testid="close-position">
            Close position
          </Button>
        ) : null}
      </div>
      <Live testid="ticket-result">{props.result ? <p class="notice">{props.result}</p> : null}</Live>
    </>
  );
}

/** The client order id, the command's weights and the reads spent in the last minute (one small line). */
export function TicketMeta(props: Pick<TicketFooterProps, 'coid' | 'weights' | 'spend'>) {
  return (
    <p class="muted small meta">
      Client order id <code>{props.coid}</code> · request weight {props.weights?.request ?? 1}, action weight{' '}
      {props.weights?.action ?? 1} · reads {props.spend} / 1 200 per min
    </p>
  );
}
