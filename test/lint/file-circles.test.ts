/**
 * No import circle between files of main/, common/ and preload/: the layer rule keeps folders
 * acyclic, this keeps the files inside a folder so (a circle makes load order matter and hides
 * which module owns a shared type). Every relative static import and re-export counts, type-only
 * ones included: a type circle is still two files that cannot be read one without the other.
 */
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');
const AREAS = ['main', 'common', 'preload'];

type Graph = ReadonlyMap<string, readonly string[]>;

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return /\.tsx?$/.test(entry.name) && !entry.name.endsWith('.d.ts') ? [full] : [];
  });
}

/** The relative specifiers of a file's import and export-from declarations (not dynamic import()). */
function staticImports(file: string): string[] {
  const source = ts.createSourceFile(file, fs.readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, false);
  const specifiers: string[] = [];
  for (const statement of source.statements) {
    if ((ts.isImportDeclaration(statement) || ts.isExportDeclaration(statement)) && statement.moduleSpecifier !== undefined && ts.isStringLiteral(statement.moduleSpecifier)) {
      if (statement.moduleSpecifier.text.startsWith('.')) specifiers.push(statement.moduleSpecifier.text);
    }
  }
  return specifiers;
}

/** The source file a relative specifier names (`./x.js` is `./x.ts` before the build), or null outside the tree. */
function resolve(from: string, specifier: string): string | null {
  const target = path.resolve(path.dirname(from), specifier);
  const stem = target.replace(/\.(c|m)?js$/, '');
  for (const candidate of [`${stem}.ts`, `${stem}.tsx`, target, path.join(target, 'index.ts')]) {
    if (fs.existsSync(candidate) && fs.statSync(candidate).isFile()) return candidate;
  }
  return null;
}

function importGraph(): Graph {
  const graph = new Map<string, string[]>();
  for (const area of AREAS) {
    for (const file of sourceFiles(path.join(ROOT, area))) {
      const from = path.relative(ROOT, file);
      const targets = staticImports(file)
        .map((specifier) => resolve(file, specifier))
        .filter((target): target is string => target !== null)
        .map((target) => path.relative(ROOT, target));
      graph.set(from, targets);
    }
  }
  return graph;
}

/** Each circle found by a depth-first walk, named file → file → … → the first file again. */
function circles(graph: Graph): string[] {
  const found: string[] = [];
  const done = new Set<string>();
  const trail: string[] = [];
  const onTrail = new Set<string>();
  const visit = (file: string): void => {
    if (onTrail.has(file)) {
      found.push([...trail.slice(trail.indexOf(file)), file].join(' → '));
      return;
    }
    if (done.has(file)) return;
    trail.push(file);
    onTrail.add(file);
    for (const next of graph.get(file) ?? []) visit(next);
    trail.pop();
    onTrail.delete(file);
    done.add(file);
  };
  for (const file of [...graph.keys()].sort()) visit(file);
  return found;
}

describe('file import circles', () => {
  it('test_a_circle_is_found_and_named', () => {
    const graph = new Map([
      ['main/x/a.ts', ['main/x/b.ts']],
      ['main/x/b.ts', ['main/x/c.ts']],
      ['main/x/c.ts', ['main/x/a.ts', 'main/x/d.ts']],
      ['main/x/d.ts', []],
    ]);
    expect(circles(graph)).toEqual(['main/x/a.ts → main/x/b.ts → main/x/c.ts → main/x/a.ts']);
    expect(circles(new Map([['main/x/a.ts', ['main/x/b.ts']], ['main/x/b.ts', []]]))).toEqual([]);
  });

  it('test_type_imports_and_re_exports_are_followed', () => {
    const file = path.join(ROOT, 'main/ipc/dispatch.ts');
    expect(staticImports(file).length).toBeGreaterThan(0);
    const graph = importGraph();
    expect(graph.get('main/ipc/dispatch.ts')).toContain('main/ipc/client.ts');
    expect(graph.get('main/connections/index.ts')?.length ?? 0).toBeGreaterThan(0);
  });

  it('test_no_file_circle_in_main_common_or_preload', () => {
    expect(circles(importGraph())).toEqual([]);
  });
});
