/**
 * Plain-words descriptions of what a page asks to sign, e.g.
 * "Buy 2.5 ETH-PERP at 3,120.50, good-til-cancelled, post-only — request weight 1, action weight 1" and
 * "Withdraw 10.00 USDC (10000000 base units) to 0x99…A4dc". Pure.
 */
import { isWholePositionLeg, type PerpsCommand, type PerpsOrderInput } from './commands';
import { formatUnitsMin2, groupDecimal, shortAddress } from '../format';
import { signedDecimal } from '../format/order-words';

const TIF: Record<string, string> = { gtc: 'good-til-cancelled', ioc: 'immediate-or-cancel', fok: 'fill-or-kill' };

/**
 * One line per order of a createOrders, its numbers the signed strings through the perps formatter
 * (`signedDecimal`: grouped, never rounded). `symbol` names an instrument id (`instrumentLabel`: the
 * venue's symbol beside the id).
 */
export function describeOrder(o: PerpsOrderInput, symbol: (iid: number) => string): string {
  if (o.tr && isWholePositionLeg(o)) {
    // Quantity "0" on a position group's leg: the venue closes what the position holds when it triggers.
    return (
      `${o.tr.tpsl === 'tp' ? 'Take-profit' : 'Stop-loss'} on the whole ` +
      `${symbol(o.iid)} position: ${o.buy ? 'buy' : 'sell'} what it holds at market ` +
      `when the mark reaches ${signedDecimal(o.tr.trp).text}, reduce-only`
    );
  }
  const parts = [
    `${o.buy ? 'Buy' : 'Sell'} ${signedDecimal(o.qty).text} ` +
      `${symbol(o.iid)} ${o.p ? `at ${signedDecimal(o.p).text}` : 'at market'}`,
  ];
  if (o.tif) parts.push(TIF[o.tif] ?? o.tif);
  if (o.tr)
    parts.push(
      `${o.tr.tpsl === 'tp' ? 'take-profit' : 'stop-loss'} trigger at ` +
        `${signedDecimal(o.tr.trp).text}${o.tr.market ? ' (market)' : ''}`,
    );
  if (o.po) parts.push('post-only');
  if (o.ro) parts.push('reduce-only');
  return parts.join(', ');
}

/** Title and lines of a perps command. Amounts of withdraw are shown in USDC and in base units (6 decimals). */
export function describePerpsCommand(
  cmd: PerpsCommand,
  symbol: (iid: number) => string,
): { title: string; lines: string[] } {
  const w = `request weight ${cmd.weight.request}, action weight ${cmd.weight.action}`;
  const op = cmd.body;
  switch (op.type) {
    case 'createOrders': {
      const lines = op.args.map((o) => describeOrder(o, symbol));
      if (op.grp === 'position') return { title: 'Protect a position', lines: [...lines, `— ${w}`] };
      if (lines.length === 1) return { title: 'Place an order', lines: [`${lines[0]} — ${w}`] };
      return { title: `Place ${lines.length} orders`, lines: [...lines, `— ${w}`] };
    }
    case 'cancelOrders':
      return { title: 'Cancel orders', lines: [`Cancel ${op.args.map((x) => `#${x}`).join(', ')} — ${w}`] };
    case 'cancelOrdersCOID':
      // Each client order id in full: two ids that share a prefix name different orders.
      return { title: 'Cancel orders', lines: [`Cancel client order ids ${op.args.join(', ')} — ${w}`] };
    case 'cancelAll':
      return {
        title: 'Cancel all orders',
        lines: [`Cancel every open order${op.args.iid !== undefined ? ` on ${symbol(op.args.iid)}` : ''} — ${w}`],
      };
    case 'autoCancel':
      return {
        title: 'Dead-man switch',
        lines: [
          op.args.time === 0
            ? 'Disarm automatic cancel'
            : `Cancel all orders automatically at ${new Date(op.args.time).toISOString()}`,
        ],
      };
    case 'updateLeverage':
      return {
        title: 'Change leverage',
        lines: [
          `Set ${symbol(op.args.iid)} leverage to ${op.args.lev}× ` +
            `(${op.args.cross ? 'cross' : 'isolated'} margin) — ${w}`,
        ],
      };
    case 'updateMargin': {
      const { amt, iid } = op.args;
      return {
        title: 'Change isolated margin',
        lines: [
          `${amt.startsWith('-') ? 'Remove' : 'Add'} ` +
            `${groupDecimal(amt.replace('-', ''))} USDC margin on ${symbol(iid)}`,
        ],
      };
    }
    case 'internalTransfer':
      return {
        title: 'Transfer funds',
        lines: [
          `Transfer ${groupDecimal(op.args.amount)} USDC to ` +
            `${shortAddress(op.args.to)}${cmd.label ? ` — “${cmd.label}”` : ''}`,
        ],
      };
    case 'withdraw':
      return {
        title: 'Withdraw funds',
        lines: [
          `Withdraw ${formatUnitsMin2(op.args.amount, 6)} USDC ` +
            `(${op.args.amount} base units) to ${shortAddress(op.args.to)}`,
        ],
      };
    case 'deleteProxy':
      return { title: 'Delete a trading key', lines: [`Delete proxy key ${shortAddress(op.args.proxy)}`] };
    case 'createProxy':
      return {
        title: 'Issue a trading key',
        lines: [
          `Issue proxy key ${shortAddress(op.args.proxy)}, valid until ${new Date(op.args.expiry).toISOString()}`,
        ],
      };
  }
}
