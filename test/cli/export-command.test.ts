/** `ward export`, `ward keys`, `ward verify-bundle` and `ward review` as a user runs them (E1–E4). */
import { execFileSync } from 'node:child_process';
import { createPublicKey } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { journalEvent } from '../../common/events.js';
import { openSecretStore } from '../../main/credentials/open-store.js';
import { parseNamespace } from '../../main/namespaces/namespace.js';
import { appendTurn, tarEntries } from '../export/support.js';
import { seedConversation } from '../support/seed.js';
import { tempDir } from '../support/temp.js';
import { ward } from '../support/ward-cli.js';

const bus = process.env.DBUS_SESSION_BUS_ADDRESS;

/** A data folder with one conversation of two turns; the keychain is the test session's. */
function exportable() {
  const home = tempDir();
  const { core, store, conversation } = seedConversation(home);
  appendTurn(store, conversation.id, '00000000-0000-4000-8000-000000000001', 'It is sunny in Lisbon.', 0.002);
  appendTurn(store, conversation.id, '00000000-0000-4000-8000-000000000002', 'Still sunny.', 0.005);
  return { home, core, store, conversation, env: { WARD_HOME: home, DBUS_SESSION_BUS_ADDRESS: bus } };
}

describe('ward export and ward verify-bundle', () => {
  it('test_round_trip_export_then_verify_on_a_fresh_ward_home_with_no_keychain', async () => {
    expect(bus, 'run the tests through `npm test` (scripts/with-test-services.mjs starts gnome-keyring)').toBeTruthy();
    const { home, core, conversation, env } = exportable();
    core.close();
    const out = path.join(tempDir(), 'chat.wardbundle');
    expect(await ward(['keys', 'show'], { env })).toMatchObject({ code: 0, stdout: expect.stringContaining('has no signing key yet') });
    const exported = await ward(['export', conversation.id.slice(0, 8), '--out', out], { env });
    expect(exported.stderr).toBe('');
    expect(exported.code).toBe(0);
    const fingerprint = /signed by (SHA256:\S+)/.exec(exported.stdout)![1]!;
    expect(exported.stdout).toBe(`exported 16 events to ${out}, signed by ${fingerprint}\n`);
    const shown = JSON.parse((await ward(['keys', 'show', '--json'], { env })).stdout);
    expect(shown).toMatchObject({ namespace: 'default', fingerprint, publicKey: expect.stringContaining('BEGIN PUBLIC KEY') });
    const keyFile = path.join(tempDir(), 'signer.pem');
    expect(await ward(['keys', 'export-public', '--out', keyFile], { env })).toMatchObject({ code: 0, stdout: `wrote ${fingerprint} to ${keyFile}\n` });

    // The recipient: no data folder, no keychain (no D-Bus), nothing but the file and the key.
    const elsewhere = path.join(tempDir(), 'never-made');
    const offline = { WARD_HOME: elsewhere };
    for (const signer of [keyFile, fingerprint]) {
      const verified = await ward(['verify-bundle', out, '--signer', signer], { env: offline });
      expect(verified.code).toBe(0);
      expect(verified.stdout).toContain(`ok: ${out} is intact and signed\n  conversation ${conversation.id} ("first chat"): 16 events`);
      expect(verified.stdout).toContain(`signature valid by ${fingerprint} (the expected signer)`);
    }
    const json = JSON.parse((await ward(['verify-bundle', out, '--json'], { env: offline })).stdout);
    expect(json).toMatchObject({ ok: true, signer: fingerprint, events: 16, statement: { namespaceHash: parseNamespace('default').hash, cliVersion: '2.1.328' } });
    expect(json.statement.namespace).toBeUndefined();

    const stranger = await ward(['verify-bundle', out, '--signer', `SHA256:${'A'.repeat(43)}`], { env: offline });
    expect(stranger.code).toBe(3);
    expect(stranger.stdout).toMatch(/^NOT VERIFIED: the bundle is signed by SHA256:\S+, not by the expected signer SHA256:A{43}\n/);

    const review = await ward(['review', out], { env: offline });
    expect(review.code).toBe(0);
    // Shown before the journal is read: not yet verified, and no signer named, until the verdict after the last event.
    expect(review.stdout.split('\n')[0]).toBe('Read-only review · NOT YET VERIFIED · the verdict follows the last event');
    expect(review.stdout).toContain(`  signature valid by ${fingerprint} (the key inside the bundle; pass --signer to require a key you trust)\n`);
    expect(review.stdout).toMatch(/#5 \S+ assistant_text {2}It is sunny in Lisbon\./);
    // Cost per turn is the growth of the session total, one number a line; the total is labelled as one, once.
    expect(review.stdout).toMatch(/#15 \S+ usage {2}turn: 120 in \/ 30 out tokens, \$0\.0030\n/);
    // The events stream as they are checked; the verdict on the whole bundle follows Ward's total of the turns.
    expect(review.stdout).toContain(`\nTotal: 2 turns, 240 in · 60 out tokens · $0.0050\n\nok: ${out} is intact and signed\n`);
    expect(fs.existsSync(elsewhere)).toBe(false);
    expect(fs.readdirSync(path.join(home, 'namespaces'))).toHaveLength(1);

    const again = await ward(['export', conversation.id, '--out', out], { env });
    expect(again).toMatchObject({ code: 2, stderr: `ward export: ${out} already exists; choose another name with --out or remove it\n` });
  });

  it('test_every_fingerprint_ward_shows_is_the_one_ssh_keygen_prints_for_the_exported_public_key', async () => {
    const { core, conversation, env } = exportable();
    core.close();
    const dir = tempDir();
    const out = path.join(dir, 'chat.wardbundle');
    const signedBy = /signed by (SHA256:\S+)\n/.exec((await ward(['export', conversation.id, '--out', out], { env })).stdout)?.[1];
    const keyFile = path.join(dir, 'signer.pem');
    const wrote = (await ward(['keys', 'export-public', '--out', keyFile], { env })).stdout;
    // The key as an OpenSSH public key line: string "ssh-ed25519", string <32-byte key>, each after its uint32 length.
    const raw = createPublicKey(fs.readFileSync(keyFile, 'utf8')).export({ format: 'der', type: 'spki' }).subarray(-32);
    const blob = Buffer.concat([Buffer.from([0, 0, 0, 11]), Buffer.from('ssh-ed25519'), Buffer.from([0, 0, 0, 32]), raw]);
    fs.writeFileSync(path.join(dir, 'signer.pub'), `ssh-ed25519 ${blob.toString('base64')} ward-signer\n`);
    const sshKeygen = execFileSync('ssh-keygen', ['-l', '-f', path.join(dir, 'signer.pub')], { encoding: 'utf8', timeout: 10_000 });
    const fingerprint = /^256 (SHA256:[A-Za-z0-9+/]{43}) ward-signer \(ED25519\)\n$/.exec(sshKeygen)?.[1];
    expect(fingerprint, sshKeygen).toBeDefined();
    expect(signedBy).toBe(fingerprint);
    expect(wrote).toBe(`wrote ${fingerprint} to ${keyFile}\n`);
    expect(JSON.parse((await ward(['keys', 'show', '--json'], { env })).stdout).fingerprint).toBe(fingerprint);
    expect(JSON.parse((await ward(['verify-bundle', out, '--json'])).stdout)).toMatchObject({ ok: true, signer: fingerprint });
    expect(tarEntries(out).find(([name]) => name === 'README.txt')![1].toString('utf8')).toContain(`--signer ${fingerprint}\n`);
  });

  it('test_a_missing_bundle_or_output_folder_is_named_in_one_clear_line_with_the_not_found_exit_code', async () => {
    const missing = path.join(tempDir(), 'nowhere', 'chat.wardbundle');
    for (const command of ['verify-bundle', 'review']) {
      expect(await ward([command, missing], { env: { WARD_HOME: tempDir() } })).toMatchObject({ code: 5, stdout: '', stderr: `ward ${command}: no such file: ${missing}\n` });
    }
    const { core, conversation, env } = exportable();
    core.close();
    for (const format of ['bundle', 'markdown']) {
      const out = path.join(path.dirname(missing), `chat.${format}`);
      expect(await ward(['export', conversation.id, '--format', format, '--out', out], { env })).toMatchObject({
        code: 5,
        stdout: '',
        stderr: `ward export: no such folder: ${path.dirname(missing)} (to write chat.${format} in); create it or choose another --out\n`,
      });
    }
  });

  it('test_names_the_namespace_only_when_asked', async () => {
    const { core, conversation, env } = exportable();
    core.close();
    const out = path.join(tempDir(), 'named.wardbundle');
    expect((await ward(['export', conversation.id, '--out', out, '--name-namespace'], { env })).code).toBe(0);
    expect(JSON.parse((await ward(['verify-bundle', out, '--json'])).stdout).statement.namespace).toBe('default');
  });

  it('test_markdown_and_html_transcripts_and_an_admin_policy_that_requires_signatures_refuses_them', async () => {
    const { core, conversation, env } = exportable();
    core.close();
    const dir = tempDir();
    expect((await ward(['export', conversation.id, '--format', 'markdown', '--out', path.join(dir, 'chat.md')], { env })).code).toBe(0);
    const markdown = fs.readFileSync(path.join(dir, 'chat.md'), 'utf8');
    expect(markdown).toContain('### Agent');
    expect(markdown).toContain('It is sunny in Lisbon.');
    expect(markdown).toContain('*Turn: 120 in · 30 out tokens · $0.0030*\n');
    expect(markdown.endsWith('*Total: 2 turns, 240 in · 60 out tokens · $0.0050*\n')).toBe(true);

    const policy = path.join(tempDir(), 'policy.json');
    fs.writeFileSync(policy, JSON.stringify({ reason: 'Example IT', requireSignedExports: true }), { mode: 0o644 });
    const refused = await ward(['export', conversation.id, '--format', 'html', '--out', path.join(dir, 'chat.html')], { env: { ...env, WARD_POLICY: policy } });
    expect(refused).toMatchObject({ code: 2, stderr: 'ward export: an export as html carries no signature, and every export must be signed; export a bundle: refused by Example IT\n' });
    expect(fs.existsSync(path.join(dir, 'chat.html'))).toBe(false);
    expect((await ward(['export', conversation.id, '--out', path.join(dir, 'chat.wardbundle')], { env: { ...env, WARD_POLICY: policy } })).code).toBe(0);
  });

  it('test_e3_refuses_an_export_holding_a_secret_of_the_namespace_names_the_event_and_writes_nothing', async () => {
    const { home, core, store, conversation, env } = exportable();
    const secret = 'ghp_canary_export_5f2c9a1e7b3d';
    await openSecretStore(home, parseNamespace('default'), { kind: 'keychain' }).set('mcp:github', JSON.stringify({ access_token: secret, token_type: 'Bearer' }));
    store.journal.append(conversation.id, { ...journalEvent('tool_result', { toolUseId: 't9', tool: 'github__search', ok: true, bytes: 60, durationMs: 5, errorCode: null, preview: `token is ${secret}`, previewTruncated: false }), runId: null });
    core.close();
    const dir = tempDir();
    for (const format of ['bundle', 'markdown', 'html']) {
      const out = path.join(dir, `chat.${format}`);
      const result = await ward(['export', conversation.id, '--format', format, '--out', out], { env });
      expect(result).toMatchObject({ code: 1, stderr: 'ward export: event 17 (tool_result) contains a secret Ward holds for this namespace (credential mcp:github); nothing was exported\n' });
      expect(result.stderr).not.toContain(secret);
    }
    // The model key Ward's environment holds counts too.
    const key = 'sk-ant-canary-export-0c1d2e3f4a5b';
    const holder = seedConversation(home);
    holder.store.journal.append(holder.conversation.id, { ...journalEvent('assistant_text', { text: `the key is ${key}` }), runId: null });
    holder.core.close();
    const leaked = await ward(['export', holder.conversation.id, '--out', path.join(dir, 'key.wardbundle')], { env: { ...env, ANTHROPIC_API_KEY: key } });
    expect(leaked).toMatchObject({ code: 1, stderr: "ward export: event 1 (assistant_text) contains a secret Ward holds for this namespace (ANTHROPIC_API_KEY in Ward's environment); nothing was exported\n" });
    expect(fs.readdirSync(dir)).toEqual([]);
  });
});
