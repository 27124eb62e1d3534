import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { unitTestFiles } from '../unit-tests.js';

const root = path.resolve(import.meta.dirname, '../..');

/** What a unit test may not reach: each starts a process, a server, a browser or the OS keychain. */
const slowModules: readonly { pattern: RegExp; why: string }[] = [
  { pattern: /^(node:)?child_process$/, why: 'starts processes' },
  { pattern: /^playwright(-core)?$/, why: 'drives a browser' },
  { pattern: /^keytar$/, why: 'talks to the OS keychain over D-Bus' },
  { pattern: /^main\/credentials\/keychain-(store|probe)\.ts$/, why: 'talks to the OS keychain over D-Bus' },
  { pattern: /^test\/support\/(ward-cli|pty|lock-holder)\.ts$/, why: 'starts the ward CLI or a helper process' },
  { pattern: /^test\/support\/sites\.ts$/, why: 'starts network servers' },
  { pattern: /^test\/app\/runs\/harness\.ts$/, why: 'starts the pinned CLI' },
  { pattern: /^test\/e2e\/harness\//, why: 'starts the desktop app and a browser' },
  { pattern: /^test\/fixtures\//, why: 'starts fixture servers (model provider, OIDC, MCP)' },
];

const importPattern = /(?:\bfrom|\bimport)\s*\(?\s*['"]([^'"]+)['"]/g;

/** A relative specifier as a repository path (`./x.js` written for `./x.ts`); a package as itself. */
function resolveSpecifier(fromFile: string, specifier: string): string {
  if (!specifier.startsWith('.')) return specifier;
  const base = path.join(path.dirname(fromFile), specifier);
  const candidates = [base.replace(/\.js$/, '.ts'), base.replace(/\.js$/, '.tsx'), base];
  return candidates.find((candidate) => fs.existsSync(path.join(root, candidate))) ?? base;
}

/**
 * The slow modules a test file reaches through its own imports and, transitively, through the
 * test helpers it imports (code under main/ is not followed: the unit project's setup file makes
 * any process it starts fail at run time).
 */
function slowImportsOf(file: string, seen = new Set<string>()): string[] {
  if (seen.has(file)) return [];
  seen.add(file);
  const found: string[] = [];
  for (const [, specifier] of fs.readFileSync(path.join(root, file), 'utf8').matchAll(importPattern)) {
    const target = resolveSpecifier(file, specifier!);
    const slow = slowModules.find(({ pattern }) => pattern.test(target));
    if (slow) found.push(`${file} imports ${target} (${slow.why})`);
    else if (target.startsWith('test/') && fs.existsSync(path.join(root, target))) found.push(...slowImportsOf(target, seen));
  }
  return found;
}

describe('the unit test project stays fast', () => {
  it('test_every_listed_unit_test_file_exists', () => {
    expect(unitTestFiles.filter((file) => !fs.existsSync(path.join(root, file)))).toEqual([]);
  });

  it('test_no_unit_test_file_reaches_a_process_a_server_a_browser_or_the_keychain', () => {
    expect(unitTestFiles.flatMap((file) => slowImportsOf(file))).toEqual([]);
  });

  it('test_the_check_names_an_integration_test_that_starts_the_cli', () => {
    expect(slowImportsOf('test/cli/arguments.test.ts').join('\n')).toContain('test/support/ward-cli.ts');
  });
});
