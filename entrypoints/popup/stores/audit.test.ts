import { afterEach, describe, expect, it, vi } from 'vitest';
import { createAuditStore, joinExport, PAGE } from './audit';
import { fakeCall, FakeFailure } from './testkit';

const entry = (id: number) => ({
  id,
  at: id * 1000,
  origin: 'extension',
  account: '0xabc',
  kind: 'perps',
  summary: `entry ${id}`,
  result: 'ok',
  status: 'ok',
});
/** A check answer as `audit.verify` gives it (the contract's `auditCheckSchema`). */
const check = (over: object) => ({
  ok: false,
  state: 'ok',
  count: 2,
  checked: 2,
  full: true,
  unauthenticated: 0,
  pending: 0,
  seals: [],
  ...over,
});

describe('joinExport', () => {
  it('concatenates CSV pages with CRLF', () => {
    expect(joinExport('csv', ['h\r\na', 'b', '']).join('')).toBe('h\r\na\r\nb\r\n');
  });
  it('splices JSON pages into one array, skipping empty ones', () => {
    const doc = joinExport('json', ['[{"id":1},\n{"id":2}]', '[]', '[{"id":3}]']).join('');
    expect(JSON.parse(doc)).toEqual([{ id: 1 }, { id: 2 }, { id: 3 }]);
  });
});

describe('createAuditStore', () => {
  afterEach(() => vi.useRealTimers());

  it('pages entries by the last id and offers no older page after a short one', async () => {
    const { call, calls } = fakeCall({
      'audit.list': (p) =>
        p.before === undefined ? Array.from({ length: PAGE }, (_, i) => entry(200 - i)) : [entry(10)],
    });
    const s = createAuditStore(call);
    await s.load();
    expect(s.next.value).toBe(200 - PAGE + 1);
    await s.load(s.next.value ?? undefined);
    expect(calls.at(-1)?.payload).toMatchObject({ limit: PAGE, before: 151 });
    expect(s.entries.value).toHaveLength(PAGE + 1);
    expect(s.next.value).toBeNull();
  });

  it('filters by origin and kind and starts from the newest page', async () => {
    const { call, calls } = fakeCall({ 'audit.list': () => [entry(1)] });
    const s = createAuditStore(call);
    await s.filter({ origin: 'https://app.example' });
    await s.filter({ kind: 'grant' });
    expect(calls.at(-1)?.payload).toEqual({ limit: PAGE, origin: 'https://app.example', kind: 'grant' });
  });

  it('exports every page, following `next`, and shows progress only while exporting', async () => {
    const { call, calls } = fakeCall({
      'audit.export': (p) =>
        p.after === undefined ? { text: '[{"id":1}]', next: 1 } : { text: '[{"id":2}]', next: null },
    });
    const s = createAuditStore(call);
    const parts = await s.exportAll('json');
    expect(JSON.parse((parts ?? []).join(''))).toEqual([{ id: 1 }, { id: 2 }]);
    expect(calls.map((c) => c.payload)).toEqual([{ format: 'json' }, { format: 'json', after: 1 }]);
    expect(s.exporting.value).toBeUndefined();
  });

  it('shows why an export failed', async () => {
    const { call } = fakeCall({
      'audit.export': () => {
        throw new FakeFailure({ name: 'LockedError', shortMessage: 'Unlock first.' });
      },
    });
    const s = createAuditStore(call);
    expect(await s.exportAll('csv')).toBeUndefined();
    expect(s.error.value).toBe('Unlock first.');
  });

  it('polls a full check until the background has finished', async () => {
    vi.useFakeTimers();
    const answers = [
      check({ state: 'checking', progress: { done: 1, total: 2, full: true } }),
      check({ state: 'ok', ok: true }),
    ];
    const { call, calls } = fakeCall({ 'audit.verify': () => answers.shift() });
    const s = createAuditStore(call, 400);
    s.runCheck(true);
    await vi.advanceTimersByTimeAsync(0);
    expect(s.check.value?.state).toBe('checking');
    await vi.advanceTimersByTimeAsync(400);
    expect(s.check.value?.state).toBe('ok');
    expect(calls.map((c) => c.payload)).toEqual([{ full: true }, {}]);
  });

  it(
    'shows the newest page before the chain check is asked ' + 'for, and a check that never answers holds no row back',
    async () => {
      const { call, calls } = fakeCall({
        'audit.list': () => [entry(2), entry(1)],
        'audit.verify': () => new Promise(() => undefined),
        'audit.origins': () => ['extension'],
      });
      const s = createAuditStore(call);
      s.start();
      await vi.waitFor(() => expect(s.entries.value.map((e) => e.id)).toEqual([2, 1]));
      expect(calls[0]?.type).toBe('audit.list');
      await vi.waitFor(() => expect(calls.map((c) => c.type)).toContain('audit.verify'));
      expect(s.check.value).toBeUndefined();
    },
  );
});
