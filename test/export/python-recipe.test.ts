/**
 * docs/bundle-format.md's verification recipe, and its short form in every bundle's README.txt,
 * run with Debian's python3 and python3-cryptography on real bundles: a reviewer without Ward
 * verifies them, with Python's json.dumps as the RFC 8785 encoding, and is told which event is
 * not as signed.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { seedConversation } from '../support/seed.js';
import { tempDir } from '../support/temp.js';
import { ward } from '../support/ward-cli.js';
import { appendTurn, makeBundle, rechain, tarEntries, withLines, type Line } from './support.js';

const DOC = fs.readFileSync(path.join(import.meta.dirname, '../../docs/bundle-format.md'), 'utf8');
const RECIPE = /```python\n([\s\S]*?)```/.exec(DOC)![1]!;
/** Text JSON escapes differently from one library to the next: controls, quotes, non-ASCII, U+2028, an astral character. */
const AWKWARD = 'déjà vu \u0001\u001f "quoted" \\ back\u2028slash \u007f 😀 日本語 <b>&amp;</b>';

function run(recipe: string, file: string): { code: number | null; stdout: string; stderr: string } {
  const script = path.join(tempDir(), 'verify.py');
  fs.writeFileSync(script, recipe);
  const result = spawnSync('python3', [script, file], { encoding: 'utf8', timeout: 60_000 });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe('the Python recipe (docs/bundle-format.md)', () => {
  it('test_python3_with_cryptography_is_installed', () => {
    expect(spawnSync('python3', ['-c', 'import cryptography'], { encoding: 'utf8' }).status, 'install python3-cryptography (Debian)').toBe(0);
  });

  it('test_the_recipe_verifies_a_bundle_with_awkward_text_and_prints_the_signers_ssh_keygen_fingerprint', () => {
    const bundle = makeBundle(1, { after: (store, conversationId) => appendTurn(store, conversationId, '00000000-0000-4000-8000-0000000000a1', AWKWARD) });
    expect(run(RECIPE, bundle.file)).toEqual({ code: 0, stdout: `ok: 16 events, signed by ${bundle.key.fingerprint}\n`, stderr: '' });
  });

  it('test_the_recipe_names_event_2_when_it_was_edited_and_the_chain_recomputed_and_refuses_a_reorder', () => {
    const bundle = makeBundle(2);
    const edited = withLines(bundle, (lines) => rechain(lines.map((line) => JSON.parse(line) as Line).map((line, index) => (index === 1 ? { ...line, payload: line.payload.replace('Lisbon', 'Porto') } : line))));
    const result = run(RECIPE, edited);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/AssertionError: event 2 is not what was signed\n$/);
    const reordered = run(RECIPE, withLines(bundle, (lines) => [lines[0]!, lines[2]!, lines[1]!, ...lines.slice(3)], 'reordered.wardbundle'));
    expect(reordered.stderr).toMatch(/AssertionError: event 2 is not what was signed\n$/);
  });

  it('test_the_short_form_in_the_readme_of_a_real_export_verifies_it_and_names_an_edited_event', async () => {
    const home = tempDir();
    const { core, store, conversation } = seedConversation(home);
    appendTurn(store, conversation.id, '00000000-0000-4000-8000-000000000001', AWKWARD);
    core.close();
    const file = path.join(tempDir(), 'chat.wardbundle');
    const exported = await ward(['export', conversation.id, '--out', file], { env: { WARD_HOME: home, DBUS_SESSION_BUS_ADDRESS: process.env.DBUS_SESSION_BUS_ADDRESS } });
    expect(exported.code, exported.stderr).toBe(0);
    const readme = new Map(tarEntries(file)).get('README.txt')!.toString('utf8');
    const short = /this as verify\.py[^\n]*\n\n([\s\S]*?)\nRead it:/.exec(readme)![1]!;
    expect(short.trim().split('\n').length).toBeLessThanOrEqual(16);
    expect(run(short, file)).toEqual({ code: 0, stdout: 'ok: 8 events, signed by the key in signer.pub.pem\n', stderr: '' });
    expect(run(RECIPE, file).code).toBe(0);
    const edited = withLines({ file, dir: path.dirname(file) }, (lines) => lines.map((line, index) => (index === 4 ? line.replace('vu', 'VU') : line)));
    expect(run(short, edited).stderr).toMatch(/AssertionError: event 5 is not what was signed\n$/);
  });
});
