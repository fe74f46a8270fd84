/**
 * The methods table of `lib/dapp/README.md`, written from the records (`npm run docs:methods`; `methods.test.ts`
 * fails while the README's table differs): one row per method with what it does, its params, its answer, its
 * policy in words and the codes it may answer. Pure.
 */
import type { PageMethodRecord } from '../method';

/** The markers the table sits between in the README. */
export const TABLE_MARKERS = { begin: '<!-- methods:begin -->', end: '<!-- methods:end -->' } as const;

/** `record`'s policy in words: connected / unlocked / window, as the README's column reads. */
export function policyWords(record: PageMethodRecord): string {
  const { policy, grantable, docs } = record;
  if (policy.approval === 'refused') return 'refused';
  const unlocked = !policy.unlocked ? 'no' : policy.session ? 'yes, or a trading session' : 'yes';
  const window = { none: 'no', connect: 'connect', sign: grantable ? 'yes, or a grant' : 'always' }[policy.approval];
  const words = `${policy.connected ? 'yes' : 'no'} / ${unlocked} / ${window}`;
  return docs.note ? `${words} (${docs.note})` : words;
}

/** The methods table (markdown, no markers) for `records` in their order. */
export function methodsTable(records: readonly PageMethodRecord[]): string {
  const cell = (s: string) => s.replace(/\|/g, '\\|');
  const rows = records.map((r) =>
    [
      `\`${r.name}\``,
      r.docs.summary,
      r.docs.request,
      r.docs.answer,
      policyWords(r),
      r.docs.errors.length ? r.docs.errors.join(', ') : '—',
    ]
      .map(cell)
      .join(' | '),
  );
  return [
    '| method | what it does | params | answer | connected / unlocked / window | errors |',
    '|---|---|---|---|---|---|',
    ...rows.map((r) => `| ${r} |`),
    '| anything else | refused | | | | 4200 |',
  ].join('\n');
}

/** `readme` with the text between `TABLE_MARKERS` replaced by `methodsTable(records)`; throws without the markers. */
export function withMethodsTable(readme: string, records: readonly PageMethodRecord[]): string {
  const a = readme.indexOf(TABLE_MARKERS.begin);
  const b = readme.indexOf(TABLE_MARKERS.end);
  if (a < 0 || b < a) throw new Error(`the README has no ${TABLE_MARKERS.begin} … ${TABLE_MARKERS.end}`);
  return `${readme.slice(0, a + TABLE_MARKERS.begin.length)}\n\n${methodsTable(records)}\n\n${readme.slice(b)}`;
}
