/**
 * The order-book user channel of the active account with API credentials, for `createBackgroundStreams`
 * (./streams.ts): the key, secret and passphrase stay here; pushes carry REST-shaped order rows and each
 * trade as the person reads it. After a reconnect or a gap (and once at the start) the open orders are
 * re-read over REST; a resync never puts an order back in time (`Recency`).
 */
import { coalesced } from '../streams/coalesce';
import { ownClobTrade } from '../clob/trades';
import type { StreamPush } from '../messaging/streams';
import type { WebSocketConstructor } from '../streams/perps';
import { createClobChannel } from '../streams/clob';
import { Recency } from '../streams/books';
import type { ClobOpenOrder } from '../clob/wire';

/** An account's order-book API credentials and the addresses its orders name (`Vault.clobCredentials`). */
export type ClobUserCredentials = {
  apiKey: string;
  secret: string;
  passphrase: string;
  info: { account: string; funder: string | null };
};

/**
 * The order-book user channel of one account: open-order tracking (it keeps the channel wanted) and
 * pushes. A trade is pushed as the person reads it (`ownClobTrade`): the account's own order in it, found
 * by the API key (compared in the channel client) or the account's addresses (the owner, the funder).
 * Starts at once (and its first resync); returns the channel, `hasOpen` and `stop`. Never throws.
 */
export function createClobUser(
  d: {
    Ws: WebSocketConstructor;
    now: () => number;
    push: (p: StreamPush['push']) => void;
    openOrders: () => Promise<{ data: ClobOpenOrder[] }>;
  },
  url: string,
  creds: ClobUserCredentials,
) {
  const auth = { apiKey: creds.apiKey, secret: creds.secret, passphrase: creds.passphrase };
  const addresses = creds.info.funder ? [creds.info.account, creds.info.funder] : [creds.info.account];
  const open = new Set<string>();
  const recency = new Recency<string, ClobOpenOrder>();
  let closed = false;
  async function resync(): Promise<void> {
    const mark = recency.mark();
    try {
      const snap = await d.openOrders();
      if (closed) return;
      const merged = recency.merge(snap.data, (o) => o.id, mark);
      open.clear();
      for (const o of merged) open.add(o.id);
      d.push({ kind: 'clobResync', openOrders: merged });
    } catch {
      /* the next reconnect retries; the popup reads after its own orders */
    }
  }
  const channel = createClobChannel({
    url,
    channel: 'user',
    auth,
    WebSocket: d.Ws,
    now: d.now,
    onEvent: (e) => {
      if (e.kind === 'order') {
        const resting = e.order.status === 'LIVE' || e.order.status === 'DELAYED';
        if (resting) open.add(e.order.id);
        else open.delete(e.order.id);
        recency.note(e.order.id, e.order, resting);
        d.push({ kind: 'clobOrder', order: e.order });
      } else if (e.kind === 'trade') d.push({ kind: 'clobTrade', trade: ownClobTrade(e.trade, addresses) });
    },
    onResync: () => resyncs.request(),
    onStatus: (st) => d.push({ kind: 'clobStatus', state: st.state }),
  });
  const resyncs = coalesced(resync);
  channel.start();
  resyncs.request();
  return {
    channel,
    hasOpen: () => open.size > 0,
    stop() {
      closed = true;
      resyncs.stop();
      channel.stop();
    },
  };
}
