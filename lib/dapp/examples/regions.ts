/**
 * The example regions of `examples.ts` (`// #region <name>` … `// #endregion <name>`) and the README
 * blocks that show them (`<!-- example: <name> -->` followed by a ```ts block). Node only, for the test
 * that holds them equal and for `npm run docs:examples`, which rewrites the README's blocks.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

/** The examples' source file. */
export const EXAMPLES = resolve(import.meta.dirname, 'examples.ts');
/** The site developers' README that shows them. */
export const README = resolve(import.meta.dirname, '../README.md');

/** Region name → its text (without the region lines), in file order. */
export function regions(source = readFileSync(EXAMPLES, 'utf8')): Map<string, string> {
  const out = new Map<string, string>();
  for (const [, name, body] of source.matchAll(/^\/\/ #region (\S+)\n([\s\S]*?)^\/\/ #endregion \1$/gm))
    if (name && body !== undefined) out.set(name, body.trimEnd());
  return out;
}

/** `readme` with each `<!-- example: name -->` marker followed by exactly the region's ```ts block. */
export function withExamples(readme: string, regs: Map<string, string>): string {
  return readme.replace(/<!-- example: (\S+) -->(\n\n```ts\n[\s\S]*?\n```)?/g, (_all, name: string) => {
    const text = regs.get(name);
    if (text === undefined) throw new Error(`README names example ${name}, which examples.ts does not have`);
    return `<!-- example: ${name} -->\n\n\`\`\`ts\n${text}\n\`\`\``;
  });
}
