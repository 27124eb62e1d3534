/**
 * ARCHITECTURE.md is the map of the code: it must name every folder the layer map knows, with the
 * imports the layer rule allows it, and name no folder that is gone. README's layout points to it.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { MAIN_LAYERS } from '../../scripts/lint/layers.mjs';

const ROOT = path.resolve(import.meta.dirname, '../..');
const MAP = fs.readFileSync(path.join(ROOT, 'ARCHITECTURE.md'), 'utf8');

/** Each `### main/X/` section's text, by folder. */
function sections(): Map<string, string> {
  const found = new Map<string, string>();
  for (const part of MAP.split(/^### /m).slice(1)) {
    const match = /^main\/([a-z-]+)\/\n/.exec(part);
    if (match !== null) found.set(match[1]!, part);
  }
  return found;
}

describe('ARCHITECTURE.md', () => {
  it('test_every_folder_of_the_layer_map_has_a_section_listing_exactly_what_it_may_import', () => {
    const layers = MAIN_LAYERS as Record<string, readonly string[]>;
    const documented = sections();
    const domain = Object.keys(layers).filter((folder) => !['app', 'ipc', 'cli', 'electron'].includes(folder));
    for (const [folder, allowed] of Object.entries(layers)) {
      const text = documented.get(folder);
      expect(text, `ARCHITECTURE.md has no "### main/${folder}/" section`).toBeDefined();
      const line = /Imports: ([^.]*)\./.exec(text!.replace(/\n/g, ' '))?.[1];
      expect(line, `main/${folder}: no "Imports: …." line`).toBeDefined();
      const listed = line === 'nothing' ? [] : line === 'every domain folder' ? domain : line!.split(',').map((name) => name.trim());
      expect([...listed].sort(), `main/${folder}'s imports`).toEqual([...allowed].sort());
    }
  });

  it('test_it_names_no_folder_that_is_gone_and_readme_points_to_it', () => {
    const folders = fs.readdirSync(path.join(ROOT, 'main'), { withFileTypes: true }).filter((entry) => entry.isDirectory()).map((entry) => entry.name);
    expect([...sections().keys()].sort()).toEqual(folders.sort());
    for (const top of ['common', 'preload', 'renderer']) expect(MAP).toMatch(new RegExp(`^### ${top}/$`, 'm'));
    const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
    expect(readme).toContain('ARCHITECTURE.md');
    expect(readme).not.toMatch(/main\/core|WardCore/);
  });

  it('test_nothing_in_the_repository_cites_a_document_outside_it', () => {
    const files = execFileSync('git', ['ls-files'], { cwd: ROOT, encoding: 'utf8' }).split('\n').filter((file) => /\.(ts|tsx|mjs|js|md|json|yml)$/.test(file) && file !== 'test/lint/architecture.test.ts');
    const outside = files.filter((file) => fs.existsSync(path.join(ROOT, file)) && /\b(?:DESIGN|STYLE)\.md\b|\.\.\/shared\//.test(fs.readFileSync(path.join(ROOT, file), 'utf8')));
    expect(outside).toEqual([]);
  });
});
