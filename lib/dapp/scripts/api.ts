/**
 * The package's API reference (`API.md`) generated from its doc comments: every export of `index.ts`, by
 * kind, with its declaration's first line and its doc comment. Node only (TypeScript's compiler API).
 */
import { resolve } from 'node:path';
import ts from 'typescript';

/** The package's entry point. */
export const ENTRY = resolve(import.meta.dirname, '../index.ts');
/** Where the reference is written. */
export const API_MD = resolve(import.meta.dirname, '../API.md');

/**
 * The reference as Markdown: one section per export of `entry`, sorted by name. Throws `Error` naming
 * every export without a doc comment (house rule: each public function and type carries one).
 */
export function apiReference(entry = ENTRY): string {
  const program = ts.createProgram([entry], {
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
  });
  const checker = program.getTypeChecker();
  const file = program.getSourceFile(entry);
  const mod = file && checker.getSymbolAtLocation(file);
  if (!mod) throw new Error(`${entry} is not a module`);
  const undocumented: string[] = [];
  const sections = checker
    .getExportsOfModule(mod)
    .map((sym) => (sym.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(sym) : sym))
    .sort((a, b) => a.name.localeCompare(b.name))
    .map((sym) => {
      const decl = sym.declarations?.[0];
      const doc = ts.displayPartsToString(sym.getDocumentationComment(checker)).trim();
      if (!doc) undocumented.push(sym.name);
      // A type alias shows whole (its shape is the reference); anything else its first line.
      const text = decl ? decl.getText().replace(/^export /, '') : sym.name;
      const head = decl && ts.isTypeAliasDeclaration(decl) ? text : text.split('\n')[0]!.replace(/\s*\{$/, '');
      return `### \`${sym.name}\`\n\n\`\`\`ts\n${head}\n\`\`\`\n\n${doc}\n`;
    });
  if (undocumented.length) throw new Error(`exports without a doc comment: ${undocumented.join(', ')}`);
  const title = '# @countersign/site-client API\n\nGenerated from the doc comments (`npm run docs:api`); do not edit.';
  return `${title}\n\n${sections.join('\n')}`;
}
