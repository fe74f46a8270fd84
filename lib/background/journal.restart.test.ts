/**
 * The audit journal at the background across worker stops: a submission that left is recorded by the next
 * worker (as `unknown`, once, with one notification) whatever its summary's length, and a third start adds
 * nothing; a request the tampered use store flags keeps no journal record with a use (nothing was sent
 * under it), so records never pile up toward MAX_OPEN. The real background on the fake browser against the
 * in-process sandbox (`pagePathKit`); a worker stop is a second background on the same database and
 * storage.session. The journal-level side is in lib/audit/journal.restart.test.ts.
 */
import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import type { Harness } from '../../test/kits/sandbox';
import {
  type PagedBackground,
  pageSender,
  sandboxSuite,
  sleep,
  until,
  waitPending,
  perpsPosts,
  pagePathKit,
  browser,
  type Notice,
} from '../../test/kits/background';
import { serial, shared } from '../audit/log';
import { TamperedRecordError } from '../vault/errors';
import { grantUseRecords } from '../grants/use-records';

const SITE = 'https://trade.example';
const page = pageSender(SITE, 3);
type Bg = PagedBackground;

let h: Harness;
const started = sandboxSuite((x) => (h = x));
const { call, armed, grantOf, ready, settle, restart, stopFlush, btcOrder, approveAll, closeAll, capOf } = pagePathKit({
  harness: () => h,
  started,
  site: SITE,
  page,
  dbPrefix: 'journal-restart',
});

// ------------------------------------------------------------------------------------------------
describe('a submission that left is recorded by the next worker', () => {
  const coidCancels = async (bg: Bg) =>
    ((await call(bg, 'audit.list', { kind: 'perps.cancelOrdersCOID', limit: 100 })).result as
      { result: string }[] | undefined) ?? [];

  it(
    "an approved cancel of 60 client order ids (a summary over the journal's 500 characters) sent, " +
      'then the worker stops before its entry is written: the next worker records or notifies it',
    async () => {
      const { bg, wire, dbName, notices } = await ready();
      await grantOf(bg); // the coids are not the grant's: the cancel asks
      await until(() => armed(bg));
      const coids = Array.from({ length: 60 }, (_, i) => i.toString(16).padStart(32, 'a'));
      let release!: () => void;
      const busy = new Promise<void>((r) => (release = r));
      let sent = false;
      // When the cancel's answer arrives, this worker's audit queue is busy: its entry waits behind.
      wire.replaceAnswer = (_url, method) => {
        if (method !== 'GET' && !sent) {
          sent = true;
          void serial(shared(bg.db()), 'tail', () => busy);
        }
        return undefined;
      };
      const req = settle(bg.page(page).request('perps_sendCommand', { op: { type: 'cancelOrdersCOID', args: coids } }));
      await waitPending(bg);
      approveAll(bg);
      await until(() => sent);
      wire.replaceAnswer = undefined;
      stopFlush(bg);
      const later: Notice[] = [];
      const next = await restart(dbName, wire, later);
      await sleep(200); // the recovery runs at start
      const entries = await coidCancels(next);
      const told = [...notices, ...later].some((x) => x.title === 'Not in the audit log');
      release(); // cleanup only
      await req;
      expect(
        entries.length > 0 || told,
        `the cancel left (journal record stored, summary over 600 chars): the next ` +
          `worker records it or notifies (${entries.length} entries, no notification)`,
      ).toBe(true);
    },
    30_000,
  );

  it(
    'a short granted order sent, then the worker stops before its entry is written: the next ' +
      'worker records it as unknown once and notifies once, and a third start adds nothing',
    async () => {
      const { bg, wire, dbName, notices } = await ready();
      await grantOf(bg);
      await until(() => armed(bg));
      let release!: () => void;
      const busy = new Promise<void>((r) => (release = r));
      void serial(shared(bg.db()), 'tail', () => busy);
      await bg.page(page).request('perps_sendCommand', await btcOrder());
      stopFlush(bg);
      const later: Notice[] = [];
      const next = await restart(dbName, wire, later);
      const createOrders = async (b: Bg) =>
        ((await call(b, 'audit.list', { kind: 'perps.createOrders', limit: 100 })).result as
          { result: string }[] | undefined) ?? [];
      await until(async () => (await createOrders(next)).length >= 1);
      await sleep(100);
      stopFlush(next);
      const third = await restart(dbName, wire, later);
      await sleep(200);
      release();
      const entries = await createOrders(third);
      expect(entries.filter((e) => e.result === 'unknown')).toHaveLength(1);
      expect([...notices, ...later].filter((x) => x.title === 'Not in the audit log')).toHaveLength(1);
    },
    30_000,
  );
});

describe('a request the tampered use store flags keeps no journal record', () => {
  it(
    'a granted-shaped perps request the tampered store flags (sent to a window, not under ' +
      'the grant) leaves no journal record with a use, so nothing piles up toward MAX_OPEN (500)',
    async () => {
      const { bg, wire } = await ready();
      await grantOf(bg, await capOf(10));
      await until(() => armed(bg));
      const v = grantUseRecords(bg.vault()) as unknown as {
        useHeads: Map<string, unknown>;
        readBucket: (...a: unknown[]) => Promise<unknown>;
      };
      v.readBucket = async () => {
        throw new TamperedRecordError();
      };
      const before = perpsPosts(wire);
      for (let i = 0; i < 3; i++) {
        v.useHeads.clear(); // no held bucket: each use reads what is stored (and fails)
        const order = settle(bg.page(page).request('perps_sendCommand', await btcOrder()));
        await waitPending(bg);
        closeAll(bg);
        await order;
      }
      expect(perpsPosts(wire) - before).toBe(0);
      await new Promise((r) => setTimeout(r, 100));
      const withUse = (await bg.db().getAll('journal')).filter((r) => (r.record as { use?: unknown }).use);
      expect(withUse, 'no record is kept for a use the store refused (nothing was sent under it)').toHaveLength(0);
    },
    30_000,
  );
});
