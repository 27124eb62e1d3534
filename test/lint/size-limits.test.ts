/** The size limits (max-lines, max-lines-per-function) as ESLint runs them on this repository's config. */
import path from 'node:path';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');
const eslint = new ESLint({ cwd: ROOT });

async function sizeErrors(file: string, source: string): Promise<string[]> {
  const [result] = await eslint.lintText(source, { filePath: path.join(ROOT, file) });
  return result!.messages.filter((message) => message.ruleId === 'max-lines' || message.ruleId === 'max-lines-per-function').map((message) => message.ruleId!);
}

/** A file of `lines` lines (as `wc -l` counts them) where every line is a comment or blank: they count too. */
function fileOf(lines: number): string {
  return Array.from({ length: lines }, (_, index) => (index % 2 === 0 ? `// line ${index + 1}` : '')).join('\n') + '\n';
}

/** A function spanning `lines` lines from its signature to its closing brace, half of them blank or comments. */
function functionOf(lines: number): string {
  const body = Array.from({ length: lines - 2 }, (_, index) => (index % 3 === 0 ? '' : index % 3 === 1 ? '  // a comment' : `  void ${index};`));
  return ['export function long(): void {', ...body, '}', ''].join('\n');
}

describe('the size limits', () => {
  for (const file of ['main/store/example.ts', 'common/example.ts', 'preload/example.ts', 'renderer/src/example.tsx']) {
    it(`test_a_401_line_file_fails_lint_and_a_400_line_one_passes: ${file}`, async () => {
      expect(await sizeErrors(file, fileOf(401))).toEqual(['max-lines']);
      expect(await sizeErrors(file, fileOf(400))).toEqual([]);
    });

    it(`test_an_81_line_function_fails_lint_and_an_80_line_one_passes: ${file}`, async () => {
      expect(await sizeErrors(file, functionOf(81))).toEqual(['max-lines-per-function']);
      expect(await sizeErrors(file, functionOf(80))).toEqual([]);
    });
  }
});
