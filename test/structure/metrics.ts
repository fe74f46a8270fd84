/**
 * Structure figures of the non-test source, measured with the TypeScript compiler API: functions over
 * 200 lines, files over 500 lines, `as` casts, non-null `!`, exported declarations without a docstring,
 * import cycles between files (type-only imports included), import cycles between the folders of `lib/`
 * (value imports only, `folderCycles`); then the exports used only by tests (`exports.ts`).
 * `npx tsx test/structure/metrics.ts` prints them (`-v` lists undocumented and test-only exports);
 * `metrics.test.ts` holds the limits.
 */
import ts from 'typescript';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Repository root (two folders above this file). */
export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** Non-test source: `lib/`, `entrypoints/`, `components/`, without tests, testkits and the bench. */
export function sourceFiles(root = ROOT): string[] {
  const out: string[] = [];
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (/\.tsx?$/.test(name) && !/\.test\.tsx?$/.test(name) && !/(^|\/)testkit\.ts$/.test(name)) out.push(path);
    }
  };
  for (const top of ['lib', 'entrypoints', 'components']) walk(join(root, top));
  return out.sort();
}

/** One function longer than the limit: file (relative), first line, name, length in lines. */
export interface LongFunction {
  file: string;
  line: number;
  name: string;
  lines: number;
}

/** One file longer than the limit: file (relative) and its length in lines. */
export interface LongFile {
  file: string;
  lines: number;
}

/** The figures `metrics.test.ts` bounds. */
export interface Metrics {
  files: number;
  longFunctions: LongFunction[];
  /** The longest non-test source file, and every file over the file limit (longest first). */
  longestFile: LongFile;
  longFiles: LongFile[];
  asCasts: number;
  nonNull: number;
  undocumentedExports: string[];
  cycles: string[][];
}

function fnName(node: ts.Node): string {
  const n = (node as { name?: ts.Node }).name;
  if (n && ts.isIdentifier(n)) return n.text;
  const p = node.parent;
  if (p && ts.isVariableDeclaration(p) && ts.isIdentifier(p.name)) return p.name.text;
  if (p && ts.isPropertyAssignment(p)) return p.name.getText();
  return '<anonymous>';
}

function hasDoc(node: ts.Node, sf: ts.SourceFile): boolean {
  const text = sf.getFullText();
  const ranges = ts.getLeadingCommentRanges(text, node.getFullStart()) ?? [];
  return ranges.some((r) => text.slice(r.pos, r.pos + 3) === '/**');
}

function isExported(node: ts.Node): boolean {
  return ts.canHaveModifiers(node) && (ts.getModifiers(node) ?? []).some((m) => m.kind === ts.SyntaxKind.ExportKeyword);
}

/** Measures the tree at `root`. */
export function measure(root = ROOT, maxLines = 200, maxFileLines = 500): Metrics {
  const files = sourceFiles(root);
  const m: Metrics = {
    files: files.length,
    longFunctions: [],
    longestFile: { file: '', lines: 0 },
    longFiles: [],
    asCasts: 0,
    nonNull: 0,
    undocumentedExports: [],
    cycles: [],
  };
  const graph = new Map<string, string[]>();
  const host = ts.createCompilerHost({});
  for (const file of files) {
    const rel = relative(root, file);
    const text = ts.sys.readFile(file) ?? '';
    const sf = ts.createSourceFile(
      file,
      text,
      ts.ScriptTarget.ESNext,
      true,
      file.endsWith('x') ? ts.ScriptKind.TSX : ts.ScriptKind.TS,
    );
    const fileLines = lineCount(text);
    if (fileLines > m.longestFile.lines) m.longestFile = { file: rel, lines: fileLines };
    if (fileLines > maxFileLines) m.longFiles.push({ file: rel, lines: fileLines });
    const deps: string[] = [];
    const visit = (node: ts.Node): void => {
      if (ts.isAsExpression(node) || ts.isTypeAssertionExpression(node)) {
        const t = node.type;
        if (!(ts.isTypeReferenceNode(t) && t.typeName.getText() === 'const')) m.asCasts++;
      }
      if (ts.isNonNullExpression(node)) m.nonNull++;
      if (ts.isFunctionLike(node) && 'body' in node && node.body) {
        const a = sf.getLineAndCharacterOfPosition(node.getStart()).line;
        const b = sf.getLineAndCharacterOfPosition(node.getEnd()).line;
        if (b - a + 1 > maxLines)
          m.longFunctions.push({ file: rel, line: a + 1, name: fnName(node), lines: b - a + 1 });
      }
      if (
        (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) &&
        node.moduleSpecifier &&
        ts.isStringLiteral(node.moduleSpecifier)
      ) {
        const r = ts.resolveModuleName(
          node.moduleSpecifier.text,
          file,
          { moduleResolution: ts.ModuleResolutionKind.Bundler, allowImportingTsExtensions: true },
          host,
        );
        const target = r.resolvedModule?.resolvedFileName;
        if (target && !target.includes('node_modules')) deps.push(relative(root, target));
      }
      ts.forEachChild(node, visit);
    };
    visit(sf);
    for (const st of sf.statements) {
      if (!isExported(st)) continue;
      if (hasDoc(st, sf)) continue;
      const name = ts.isVariableStatement(st)
        ? st.declarationList.declarations.map((d) => d.name.getText()).join(',')
        : fnName(st);
      m.undocumentedExports.push(`${rel}:${name}`);
    }
    graph.set(rel, deps);
  }
  // Cycles: strongly connected components with more than one file.
  m.cycles.push(...components(graph));
  m.longFiles.sort((a, b) => b.lines - a.lines);
  return m;
}

/** Lines of a file's text (a final newline does not start another line). */
function lineCount(text: string): number {
  if (text === '') return 0;
  return text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
}

/** Strongly connected components of `graph` with more than one node (Tarjan), each sorted. */
function components(graph: ReadonlyMap<string, Iterable<string>>): string[][] {
  let index = 0;
  const idx = new Map<string, number>(),
    low = new Map<string, number>(),
    stack: string[] = [],
    on = new Set<string>();
  const out: string[][] = [];
  const strong = (v: string): void => {
    idx.set(v, index);
    low.set(v, index);
    index++;
    stack.push(v);
    on.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!idx.has(w)) {
        strong(w);
        low.set(v, Math.min(low.get(v) ?? 0, low.get(w) ?? 0));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v) ?? 0, idx.get(w) ?? 0));
    }
    if (low.get(v) === idx.get(v)) {
      const comp: string[] = [];
      let w: string | undefined;
      do {
        w = stack.pop();
        if (w) {
          on.delete(w);
          comp.push(w);
        }
      } while (w && w !== v);
      if (comp.length > 1) out.push(comp.sort());
    }
  };
  const nodes = new Set<string>([...graph.keys(), ...[...graph.values()].flatMap((ws) => [...ws])]);
  for (const v of [...nodes].sort()) if (!idx.has(v)) strong(v);
  return out;
}

/**
 * True when an import or export declaration brings in a value at run time (not `import type`, not only `type` names,
 * not `export type`).
 */
function isValueImport(st: ts.ImportDeclaration | ts.ExportDeclaration): boolean {
  if (ts.isExportDeclaration(st)) {
    if (st.isTypeOnly) return false;
    const c = st.exportClause;
    return !(c && ts.isNamedExports(c) && c.elements.length > 0 && c.elements.every((e) => e.isTypeOnly));
  }
  const c = st.importClause;
  if (!c) return true; // `import './x'` runs the module
  if (c.isTypeOnly) return false;
  if (c.name) return true;
  const b = c.namedBindings;
  return !(b && ts.isNamedImports(b) && b.elements.length > 0 && b.elements.every((e) => e.isTypeOnly));
}

/**
 * One folder-level import cycle under `lib/`: its folders and, for each folder pair inside it, one example import
 * (`from.ts -> to.ts`).
 */
export interface FolderCycle {
  folders: string[];
  edges: { from: string; to: string; example: string; count: number }[];
}

/**
 * Import cycles between the top-level folders of `lib/` (`lib/clob`, `lib/relayer` …), counting value
 * imports only (`import type` and imports of types alone are left out: they vanish at run time), over
 * every non-test file under `lib/` (tests are `*.test.ts(x)`). Files directly in `lib/` belong to no folder.
 */
export function folderCycles(root = ROOT): FolderCycle[] {
  const lib = join(root, 'lib');
  const files: string[] = [];
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (/\.tsx?$/.test(name) && !/\.test\.tsx?$/.test(name) && !name.endsWith('.d.ts')) files.push(path);
    }
  };
  walk(lib);
  const host = ts.createCompilerHost({});
  const folderOf = (f: string): string | undefined => {
    const parts = relative(lib, f).split('/');
    return parts.length > 1 && !parts[0]?.startsWith('..') ? parts[0] : undefined;
  };
  const edges = new Map<string, Map<string, string[]>>();
  for (const file of files.sort()) {
    const sf = ts.createSourceFile(
      file,
      readFileSync(file, 'utf8'),
      ts.ScriptTarget.ESNext,
      true,
      file.endsWith('x') ? ts.ScriptKind.TSX : ts.ScriptKind.TS,
    );
    for (const st of sf.statements) {
      if (
        !(ts.isImportDeclaration(st) || ts.isExportDeclaration(st)) ||
        !st.moduleSpecifier ||
        !ts.isStringLiteral(st.moduleSpecifier)
      )
        continue;
      if (!isValueImport(st)) continue;
      const r = ts.resolveModuleName(
        st.moduleSpecifier.text,
        file,
        { moduleResolution: ts.ModuleResolutionKind.Bundler, allowImportingTsExtensions: true },
        host,
      );
      const target = r.resolvedModule?.resolvedFileName;
      if (!target || target.includes('node_modules')) continue;
      const a = folderOf(file),
        b = folderOf(target);
      if (!a || !b || a === b) continue;
      const from = edges.get(a) ?? new Map<string, string[]>();
      edges.set(a, from);
      from.set(b, [...(from.get(b) ?? []), `${relative(root, file)} -> ${relative(root, target)}`]);
    }
  }
  const graph = new Map([...edges].map(([a, to]) => [a, [...to.keys()]] as const));
  return components(graph).map((folders) => ({
    folders,
    edges: folders.flatMap((a) =>
      [...(edges.get(a) ?? [])]
        .filter(([b]) => folders.includes(b))
        .map(([b, l]) => ({ from: a, to: b, example: l[0] ?? '', count: l.length })),
    ),
  }));
}

/** A folder cycle as text: its folders, then one line per folder pair with an example import. */
export function describeFolderCycle(c: FolderCycle): string {
  return [c.folders.join(' ↔ '), ...c.edges.map((e) => `  ${e.from} → ${e.to} (${e.count}), e.g. ${e.example}`)].join(
    '\n',
  );
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const m = measure();
  console.log(`files ${m.files}`);
  console.log(`functions over 200 lines ${m.longFunctions.length}`);
  for (const f of m.longFunctions) console.log(`  ${f.file}:${f.line} ${f.name} ${f.lines}`);
  console.log(`longest file ${m.longestFile.file} ${m.longestFile.lines}; files over 500 lines ${m.longFiles.length}`);
  for (const f of m.longFiles) console.log(`  ${f.file} ${f.lines}`);
  console.log(`as casts ${m.asCasts}`);
  console.log(`non-null ! ${m.nonNull}`);
  console.log(`exported declarations without a docstring ${m.undocumentedExports.length}`);
  if (process.argv.includes('-v')) for (const e of m.undocumentedExports) console.log(`  ${e}`);
  console.log(`import cycles ${m.cycles.length}`);
  for (const c of m.cycles) console.log(`  ${c.join(' ↔ ')}`);
  const folders = folderCycles();
  console.log(`folder import cycles under lib/ (value imports) ${folders.length}`);
  for (const c of folders) console.log(describeFolderCycle(c).replace(/^/gm, '  '));
  void import('./exports').then(({ testOnlyExports }) => {
    const testOnly = testOnlyExports();
    console.log(
      `exports used only by tests ${testOnly.length} (dead: not used by their ` +
        `own module either ${testOnly.filter((e) => !e.usedInModule).length})`,
    );
    if (process.argv.includes('-v'))
      for (const e of testOnly)
        console.log(`  ${e.usedInModule ? '' : 'DEAD '}${e.file}:${e.name} (${e.users.join(', ')})`);
  });
}
