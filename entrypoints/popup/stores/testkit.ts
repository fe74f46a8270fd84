/**
 * Test helpers for the popup stores: a fake `call` built with the real `createCaller` over a fake
 * `send`, answering each procedure from a handler (a thrown `WireError`-shaped object becomes a
 * `RemoteError`, as from the background). Records every call.
 */
import * as v from 'valibot';
import { createCaller } from '../../../lib/messaging/client';
import { isProcedureName, PROCEDURES } from '../../../lib/messaging/protocol';
import type { WireError } from '../../../lib/errors/base';

/** One recorded call: procedure name and payload. */
export type Recorded = { type: string; payload: Record<string, unknown> };

/** Handlers by procedure name; a handler may throw a `WireError` to make the call fail. */
export type FakeHandlers = Record<string, (payload: Record<string, unknown>) => unknown>;

/** A failure as the background reports it. */
export class FakeFailure {
  constructor(readonly error: WireError) {}
}

/** Builds a caller whose answers come from `handlers`; `calls` lists what was asked. */
export function fakeCall(handlers: FakeHandlers) {
  const calls: Recorded[] = [];
  const call = createCaller(async (m) => {
    const { type, payload } = m as Recorded;
    calls.push({ type, payload });
    const h = handlers[type];
    if (!h) return { ok: false, error: { name: 'UnknownProcedure', shortMessage: `no fake for ${type}` } };
    try {
      const result = await h(payload);
      // A fixture must have the contract's shape (the caller parses every answer by its output schema).
      if (isProcedureName(type)) {
        const checked = v.safeParse(PROCEDURES[type].output, result);
        if (!checked.success)
          console.error(`fake ${type}: ${v.getDotPath(checked.issues[0])}: ${checked.issues[0].message}`);
      }
      return { ok: true, result };
    } catch (e) {
      if (e instanceof FakeFailure) return { ok: false, error: e.error };
      throw e;
    }
  });
  return { call, calls };
}
