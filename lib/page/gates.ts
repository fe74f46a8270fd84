/**
 * The session gates, the page path's stage after admit (`request.ts`, stage 3), in this order (each a refusal before
 * anything is parsed, asked or signed):
 * 1. connection — a `connected` method needs the origin's connection (4100);
 * 2. active account — and the connection's account must be the active one (4100; `eth_accounts` is
 *    then empty): a connection records the account it was granted;
 * 3. lock — an `unlocked` method needs the vault unlocked, or a trading session (auto-lock with a live
 *    grant) for a method whose policy has `session` (4900);
 * 4. panic — while the panic switch runs (the signing gate is closed) a `sign` method is refused at once
 *    (4900), nothing asks the person.
 */
import { activeAccount } from '../accounts';
import { disconnected, unauthorized } from '../errors/rpc';
import type { Connections } from './connections';
import { LOCKED_MESSAGE, type ProviderDeps, type Session } from './context';
import { methodRecord, type PageMethod } from './methods';

/**
 * Reads the session of `origin` (its connection and the active account, side by side) and runs the
 * gates of `method`'s policy (its record's, `methods/index.ts`). Returns the session; throws 4100 / 4900 as listed in
 * the module docstring.
 */
export async function sessionGates(
  d: ProviderDeps,
  connections: Connections,
  origin: string,
  method: PageMethod,
): Promise<Session> {
  const { policy } = methodRecord(method);
  const [conn, active] = await Promise.all([connections.get(origin), activeAccount(d.db, d.vault)]);
  const granted =
    conn && active && conn.accounts[0]?.toLowerCase() === active.address.toLowerCase() ? active : undefined;
  if (policy.connected && !conn) throw unauthorized();
  if (policy.connected && !granted)
    throw unauthorized(
      'This site is connected to another account than the active one. Switch back in Countersign, or connect again.',
    );
  if (policy.unlocked && !d.vault.unlocked && !(d.vault.sessionLive && policy.session))
    throw disconnected(LOCKED_MESSAGE);
  if (policy.approval === 'sign' && d.service.halted)
    throw disconnected(
      'Countersign is stopping everything (panic switch); nothing is signed until it is unlocked again.',
    );
  return { conn, active, granted };
}
