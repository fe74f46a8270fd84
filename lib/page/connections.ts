/**
 * Each origin's connection (IndexedDB store `connections`: the account it was granted and when), held
 * in memory as last read or written here: every page request reads its origin's, and the read costs an
 * IndexedDB round trip. This class is the store's only writer: `save` holds the entry once written, a
 * `forget` empties it before and after the delete, and a read that a write overtook keeps the write's
 * value. At most `MAX_HELD_CONNECTIONS` origins are held (past it, all are dropped and read again).
 */
import type { Connection, VaultDb } from '../vault/db';

/** Origins whose connection is held in memory (past it, all are dropped and read again). */
const MAX_HELD_CONNECTIONS = 1_000;

/** The connections store of the page path (see the module docstring). */
export class Connections {
  private readonly held = new Map<string, Connection | undefined>();

  constructor(private readonly db: VaultDb) {}

  /** The connection of `origin` (undefined: not connected). */
  async get(origin: string): Promise<Connection | undefined> {
    if (this.held.has(origin)) return this.held.get(origin);
    const read = await this.db.get('connections', origin);
    if (this.held.has(origin)) return this.held.get(origin);
    this.hold(origin, read);
    return read;
  }

  /** Writes `connection` and holds it. */
  async save(connection: Connection): Promise<void> {
    await this.db.put('connections', connection);
    this.hold(connection.origin, connection);
  }

  /** Deletes the connection of `origin`; no request is served under it from the call on. */
  async forget(origin: string): Promise<void> {
    this.hold(origin, undefined);
    await this.db.delete('connections', origin);
    this.hold(origin, undefined);
  }

  private hold(origin: string, c: Connection | undefined): void {
    if (this.held.size >= MAX_HELD_CONNECTIONS && !this.held.has(origin)) this.held.clear();
    this.held.set(origin, c);
  }
}
