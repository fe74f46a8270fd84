/**
 * The sandbox relayer (`/relayer`; PROTOCOL.md §4.4, the paths and shapes `RelayClient` of
 * `@polymarket/builder-relayer-client` 0.0.10 calls): public `GET /nonce`, `/relay-payload`,
 * `/transaction`, `/deployed`; builder-authenticated `POST /submit` (deposit-wallet `WALLET-CREATE` and
 * `WALLET` batches, `submit.ts`) and `GET /transactions` (the builder key's rows). Builder headers are
 * the venue's `POLY_BUILDER_*` or the seeds' `SVC_BUILDER_*`: key live, passphrase equal, timestamp within
 * `config.clobTimestampWindowS`, HMAC over `timestamp + METHOD + path + body` (`lib/relayer/builder.ts`);
 * 401 `invalid builder credentials` otherwise. Rows carry `transactionID, transactionHash, from, to,
 * proxyAddress, data, nonce, value, state, type, metadata, createdAt, updatedAt` (+ `errorMsg` for FAILED
 * and INVALID). Safe and proxy flows are not served (400).
 */
import { Hono, type Context } from 'hono';
import { builderSignature } from '../../relayer/builder';
import { l2SignaturesEqual } from '../../clob/auth';
import type { SandboxContext } from '../context';
import { iso, parseJson } from '../http';
import { MalformedRelayRequest, submitDepositWallet } from './submit';
import type { BuilderKeyRec, RelayerTxRec } from './state';

/** The relayer's stand-in relay address answered by `/relay-payload` (proxy flow; not served further). */
const RELAY_ADDRESS = '0x0000000000000000000000000000000000000001';

/** The relayer app of `ctx` (paths relative to its `/relayer` mount). */
export function relayerRoutes(ctx: SandboxContext): Hono {
  const relayer = new Hono();
  const chain = ctx.relayerChain;
  const settle = () => chain.settle(ctx.now(), ctx.config.relayerMineMs);
  const row = (tx: RelayerTxRec) => {
    const state = chain.stateOf(tx, ctx.now(), ctx.config.relayerMineMs);
    const landed = state === 'STATE_MINED' || state === 'STATE_CONFIRMED' || state === 'STATE_FAILED';
    const updated =
      tx.outcome === 'pending' || tx.outcome === 'invalid' ? tx.submitted : tx.submitted + ctx.config.relayerMineMs;
    return {
      transactionID: tx.id,
      transactionHash: landed ? tx.hash : '',
      from: tx.from,
      to: tx.to,
      proxyAddress: tx.proxyAddress,
      data: tx.data,
      nonce: tx.nonce,
      value: '0',
      state,
      type: tx.type,
      metadata: '',
      createdAt: iso(tx.submitted),
      updatedAt: iso(updated),
      ...(tx.error === undefined ? {} : { errorMsg: tx.error }),
    };
  };

  /** The live builder key whose headers sign this request, or undefined. */
  const builder = (c: Context, body: string): BuilderKeyRec | undefined => {
    const h = (name: string) => c.req.header(`POLY_BUILDER_${name}`) ?? c.req.header(`SVC_BUILDER_${name}`);
    const key = chain.builderKeys.get(h('API_KEY') ?? '');
    const ts = h('TIMESTAMP') ?? '';
    const sig = h('SIGNATURE') ?? '';
    if (!key || key.revokedAt !== null || h('PASSPHRASE') !== key.passphrase || !/^\d{1,12}$/.test(ts))
      return undefined;
    if (Math.abs(Number(ts) - Math.floor(ctx.now() / 1000)) > ctx.config.clobTimestampWindowS) return undefined;
    const path = new URL(c.req.url).pathname.replace(/^\/relayer/, '');
    const expected = builderSignature({
      secret: key.secret,
      timestamp: Number(ts),
      method: c.req.method,
      path,
      ...(body ? { body } : {}),
    });
    return l2SignaturesEqual(expected, sig) ? key : undefined;
  };
  const unauthorized = (c: Context) => c.json({ error: 'invalid builder credentials' }, 401);

  relayer.get('/nonce', (c) => {
    settle();
    const addr = c.req.query('address') ?? '';
    const type = c.req.query('type') ?? '';
    if (!/^0x[0-9a-fA-F]{40}$/.test(addr) || !['WALLET', 'SAFE', 'PROXY'].includes(type))
      return c.json({ error: 'invalid address or type' }, 400);
    return c.json({ nonce: type === 'WALLET' ? chain.nonceOf(addr) : '0' });
  });

  relayer.get('/relay-payload', (c) => c.json({ address: RELAY_ADDRESS, nonce: '0' }));

  relayer.get('/deployed', (c) => {
    settle();
    const addr = (c.req.query('address') ?? '').toLowerCase();
    return c.json({ deployed: chain.wallets.get(addr)?.deployed ?? false });
  });

  relayer.get('/transaction', (c) => {
    settle();
    const tx = chain.txs.find((t) => t.id === (c.req.query('id') ?? ''));
    if (!tx) return c.json({ error: 'transaction not found' }, 404);
    return c.json([row(tx)]);
  });

  relayer.get('/transactions', (c) => {
    settle();
    const key = builder(c, '');
    if (!key) return unauthorized(c);
    return c.json(
      chain.txs
        .filter((t) => t.builderKey === key.key)
        .slice()
        .reverse()
        .map(row),
    );
  });

  relayer.post('/submit', async (c) => {
    settle();
    const text = await c.req.text();
    const key = builder(c, text);
    if (!key) return unauthorized(c);
    const body = parseJson(text);
    try {
      const tx = await submitDepositWallet(ctx, body, key.key);
      const r = row(tx);
      return c.json({
        transactionID: r.transactionID,
        state: r.state,
        ...(tx.error === undefined ? {} : { errorMsg: tx.error }),
      });
    } catch (err) {
      if (err instanceof MalformedRelayRequest) return c.json({ error: err.message }, 400);
      throw err;
    }
  });
  return relayer;
}
