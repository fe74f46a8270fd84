/**
 * Exports of non-test source used only by tests, found with the TypeScript compiler API: every import
 * in the repository (named, default, namespace, `export … from`) is resolved through the type checker
 * to the declaration it names (through barrels and re-exports), and an export of a file under `lib/`,
 * `entrypoints/` or `components/` is listed when some file imports it and every such file is a test
 * (`*.test.ts(x)`, a `testkit.ts`, or under `test/` but not `test/bench/`).
 * `npx tsx test/structure/metrics.ts` prints the count (`-v` the list); `metrics.test.ts` bounds it.
 */
import ts from 'typescript';
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { ROOT, sourceFiles } from './metrics';

/**
 * One export used only by tests: `file` relative to the root, the exported `name`, the test files that
 * import it, and whether its own module uses it (`usedInModule`: a helper exported so a unit test can
 * reach it directly). One that its module does not use either is dead code (`dead` lists those).
 */
export type TestOnlyExport = { file: string; name: string; users: string[]; usedInModule: boolean };

/** True for a file that exists only for tests (relative path): tests, testkits, `test/` but not the bench. */
export function isTestFile(rel: string): boolean {
  if (/\.test\.tsx?$/.test(rel) || /(^|\/)testkit\.ts$/.test(rel)) return true;
  return rel.startsWith('test/') && !rel.startsWith('test/bench/');
}

function tsFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...tsFiles(path));
    else if (/\.tsx?$/.test(name) && !name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

/** The exports of non-test source files that only test files import, sorted by file and name. */
export function testOnlyExports(root = ROOT): TestOnlyExport[] {
  const configPath = join(root, 'tsconfig.json');
  const config = ts.readConfigFile(configPath, (p) => ts.sys.readFile(p));
  const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, root, undefined, configPath);
  const files = ['lib', 'entrypoints', 'components', 'test'].flatMap((top) => tsFiles(join(root, top)));
  const program = ts.createProgram(files, { ...parsed.options, noEmit: true });
  const checker = program.getTypeChecker();
  /** declaration key (`file#name`) → files that import it */
  const users = new Map<string, Set<string>>();
  const keyOf = (symbol: ts.Symbol): string | undefined => {
    const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
    const decl = target.declarations?.[0];
    if (!decl) return undefined;
    return `${relative(root, decl.getSourceFile().fileName)}#${target.escapedName.toString()}`;
  };
  const use = (symbol: ts.Symbol | undefined, by: string): void => {
    const key = symbol && keyOf(symbol);
    if (!key) return;
    let set = users.get(key);
    if (!set) users.set(key, (set = new Set()));
    set.add(by);
  };
  const useModule = (specifier: ts.Expression, by: string): void => {
    const moduleSymbol = checker.getSymbolAtLocation(specifier);
    if (moduleSymbol) for (const e of checker.getExportsOfModule(moduleSymbol)) use(e, by);
  };
  for (const sf of program.getSourceFiles()) {
    const by = relative(root, sf.fileName);
    if (by.startsWith('..') || by.includes('node_modules')) continue;
    const visit = (node: ts.Node): void => {
      if (ts.isImportDeclaration(node) && node.importClause) {
        const c = node.importClause;
        if (c.name) use(checker.getSymbolAtLocation(c.name), by);
        const b = c.namedBindings;
        if (b && ts.isNamespaceImport(b)) useModule(node.moduleSpecifier, by);
        else if (b) for (const el of b.elements) use(checker.getSymbolAtLocation(el.name), by);
      } else if (ts.isExportDeclaration(node) && node.moduleSpecifier) {
        const c = node.exportClause;
        if (!c || ts.isNamespaceExport(c)) useModule(node.moduleSpecifier, by);
        else for (const el of c.elements) use(checker.getSymbolAtLocation(el.propertyName ?? el.name), by);
      } else if (
        ts.isCallExpression(node) &&
        node.expression.kind === ts.SyntaxKind.ImportKeyword &&
        node.arguments[0]
      ) {
        useModule(node.arguments[0], by);
      } else if (ts.isImportTypeNode(node) && node.qualifier) {
        use(checker.getSymbolAtLocation(node.qualifier), by);
      }
      ts.forEachChild(node, visit);
    };
    visit(sf);
  }
  const out: TestOnlyExport[] = [];
  for (const file of sourceFiles(root)) {
    const sf = program.getSourceFile(file);
    const moduleSymbol = sf && checker.getSymbolAtLocation(sf);
    if (!moduleSymbol) continue;
    const rel = relative(root, file);
    for (const e of checker.getExportsOfModule(moduleSymbol)) {
      const key = keyOf(e);
      if (!key?.startsWith(`${rel}#`)) continue; // re-exported from elsewhere: counted at its own file
      const by = [...(users.get(key) ?? [])].filter((u) => u !== rel);
      const name = e.escapedName.toString();
      const mentions = sf.getFullText().match(new RegExp(`\\b${name}\\b`, 'g'))?.length ?? 0;
      if (by.length > 0 && by.every(isTestFile))
        out.push({ file: rel, name, users: by.sort(), usedInModule: mentions > 1 });
    }
  }
  return out.sort((a, b) => a.file.localeCompare(b.file) || a.name.localeCompare(b.name));
}
