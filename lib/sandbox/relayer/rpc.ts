/**
 * A chain JSON-RPC **stand-in** at `/rpc` — not a chain. It answers exactly what `RelayClient.
 * deriveDepositWalletAddress()` asks (PROTOCOL.md §4.3): `eth_chainId` (the order book's chain),
 * `eth_call` of the DepositWalletFactory's `BEACON()` (a zero word: the sandbox's factory has no beacon,
 * so wallets are UUPS), and `eth_getCode` (non-empty for a deposit wallet whose creation is mined, `0x`
 * otherwise). Every other method or call answers JSON-RPC error -32601 / an execution revert (code 3).
 * Point a client at it with viem `defineChain({ …, rpcUrls: { default: { http: ['<sandbox>/rpc'] } } })`.
 */
import { Hono } from 'hono';
import { toHex } from 'viem';
import { venueContracts } from '../../relayer/contracts';
import { FACTORY_BEACON_SELECTOR } from '../../relayer/wallet';
import type { SandboxContext } from '../context';
import { parseJson } from '../http';

/** Stand-in runtime code of a deployed deposit wallet (what `eth_getCode` answers; only its non-emptiness matters). */
const WALLET_CODE =
  '0x363d3d373d3d363d7f360894a13ba1a3210667c828492db98dca3e2076cc' +
  '3735a920a3ca505d382bbc545af43d6000803e6038573d6000fd5b3d6000f3';

type RpcRequest = { id?: unknown; method?: unknown; params?: unknown };

/** The `/rpc` stand-in app of `ctx`. */
export function rpcRoutes(ctx: SandboxContext): Hono {
  const app = new Hono();
  const answer = (req: RpcRequest) => {
    const id = req.id ?? null;
    const ok = (result: unknown) => ({ jsonrpc: '2.0', id, result });
    const fail = (code: number, message: string) => ({ jsonrpc: '2.0', id, error: { code, message } });
    const params = Array.isArray(req.params) ? req.params : [];
    const chain = ctx.relayerChain;
    chain.settle(ctx.now(), ctx.config.relayerMineMs);
    switch (req.method) {
      case 'eth_chainId':
        return ok(toHex(ctx.config.clobChainId));
      case 'eth_call': {
        const call: unknown = params[0];
        const to = typeof call === 'object' && call !== null && 'to' in call ? String(call.to) : '';
        const data =
          typeof call === 'object' && call !== null
            ? String(('data' in call ? call.data : undefined) ?? ('input' in call ? call.input : ''))
            : '';
        if (
          to.toLowerCase() === venueContracts(ctx.config.clobChainId).depositWalletFactory.toLowerCase() &&
          data === FACTORY_BEACON_SELECTOR
        )
          return ok(`0x${'0'.repeat(64)}`);
        return fail(3, 'execution reverted: the sandbox RPC stand-in answers only the factory BEACON()');
      }
      case 'eth_getCode': {
        const addr = String(params[0] ?? '').toLowerCase();
        return ok(chain.wallets.get(addr)?.deployed ? WALLET_CODE : '0x');
      }
      default:
        return fail(-32601, `the method ${String(req.method)} is not served by the sandbox RPC stand-in`);
    }
  };
  app.post('/', async (c) => {
    const body = parseJson(await c.req.text());
    if (Array.isArray(body)) return c.json(body.map((r: RpcRequest) => answer(r)));
    if (typeof body !== 'object' || body === null)
      return c.json({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'parse error' } });
    return c.json(answer(body));
  });
  return app;
}
