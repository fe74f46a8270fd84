/**
 * A keyed retry within 24 h gets the first request's answer or its unknown outcome (-32002) — never a
 * second signature (`./idempotency.ts`), also for a busy site: one with 2 000 more keys written in the
 * day (a perps batch carries one key per client order id, up to 100, plus its idempotencyKey). No record
 * is dropped before its 24 h. `Submissions` over the in-memory outcome store, a fake submit that counts
 * its signatures, and a restart (a new `Submissions` on the same store).
 */
import { describe, expect, it } from 'vitest';
import { Submissions } from './idempotency';
import { memoryOutcomeStore } from '../../test/kits/outcomes';
import { OutcomeUnknownError } from '../signer/service';
import type { SigningArtifact } from '../signer/artifact';

const ORIGIN = 'https://mm.example';
const ACCOUNT = '0xabc';
const key = (k: string) => ({ keys: [`${ORIGIN}|${ACCOUNT}|perps-key|${k}`], pageKey: k });
const ARTIFACT = { kind: 'l2' } as unknown as SigningArtifact;

/** A `submit` that signs (counts) and answers, or loses its answer (`OutcomeUnknownError`). */
function venue() {
  let signed = 0;
  return {
    signed: () => signed,
    answer: (x: unknown) => async (beforeSign?: (a: SigningArtifact) => Promise<void>) => {
      await beforeSign?.(ARTIFACT);
      signed++;
      return x;
    },
    lose: () => async (beforeSign?: (a: SigningArtifact) => Promise<void>) => {
      await beforeSign?.(ARTIFACT);
      signed++;
      throw new OutcomeUnknownError('order', new Error('ECONNRESET'), { command: 'createOrders' });
    },
  };
}

/** 2 000 more keyed submissions of the same site, each answered (what a busy day looks like). */
async function busyDay(s: Submissions, v: ReturnType<typeof venue>) {
  for (let i = 0; i < 2_000; i++) await s.keyed(key(`later-${i}`), { n: i }, v.answer({ ok: i }));
}

describe('a keyed retry within 24 h past the per-site cap', () => {
  it(
    'an unknown outcome (the venue may hold the order), then 2 000 answered ' +
      'keys of the same site: the retry of the lost submission is not signed again',
    async () => {
      const store = memoryOutcomeStore();
      const s = new Submissions(store);
      const v = venue();
      const lost = await s.keyed(key('lost-1'), { order: 1 }, v.lose()).catch((e: unknown) => e);
      expect((lost as { code?: number }).code).toBe(-32002);
      await busyDay(s, v);
      const signed = v.signed();
      const retry = await s.keyed(key('lost-1'), { order: 1 }, v.lose()).catch((e: unknown) => e);
      expect(v.signed() - signed, 'the lost order is not signed a second time').toBe(0);
      expect((retry as { code?: number }).code).toBe(-32002);
    },
  );

  it(
    'an answered submission, then 2 000 keys of the same site, then ' +
      'a worker restart: the retry gets the first answer, nothing signed',
    async () => {
      const store = memoryOutcomeStore();
      const v = venue();
      const s = new Submissions(store);
      expect(await s.keyed(key('first'), { order: 1 }, v.answer({ oid: 1 }))).toEqual({ oid: 1 });
      await busyDay(s, v);
      await new Promise((r) => setTimeout(r, 0));
      const next = new Submissions(store);
      const signed = v.signed();
      const retry = await next.keyed(key('first'), { order: 1 }, v.answer({ oid: 2 })).catch((e: unknown) => e);
      expect(v.signed() - signed, 'not signed again').toBe(0);
      expect(retry).toEqual({ oid: 1 });
    },
  );
});

describe('a site at its 20 000 keyed records of the day', () => {
  it(
    'is refused a new keyed submission (-32002, nothing ' + 'signed) while every record stays; another site is not',
    async () => {
      const store = memoryOutcomeStore();
      const s = new Submissions(store);
      const v = venue();
      const batch = (i: number) => ({
        keys: Array.from({ length: 100 }, (_, j) => `${ORIGIN}|${ACCOUNT}|perps-coid|${i}-${j}`),
      });
      for (let i = 0; i < 200; i++) await s.keyed(batch(i), { batch: i }, v.answer({ ok: i }));
      const signed = v.signed();
      const refused = await s
        .keyed(key('one-more'), { order: 'one more' }, v.answer({ oid: 9 }))
        .catch((e: unknown) => e);
      expect((refused as { code?: number }).code).toBe(-32002);
      expect(v.signed()).toBe(signed);
      expect(
        await s.keyed(batch(0), { batch: 0 }, v.answer({ ok: 'again' })),
        "the first batch's record is still there",
      ).toEqual({ ok: 0 });
      const other = { keys: [`https://other.example|${ACCOUNT}|perps-key|k`], pageKey: 'k' };
      expect(await s.keyed(other, { order: 1 }, v.answer({ oid: 1 }))).toEqual({ oid: 1 });
    },
  );
});
