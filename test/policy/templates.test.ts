import fs from 'node:fs';
import path from 'node:path';
import { Window } from 'happy-dom';
import { parse as parsePlist } from 'plist';
import { describe, expect, it } from 'vitest';
import { mergeDocuments } from '../../main/policy/merge.js';
import { registryDocument } from '../../main/policy/registry-store.js';
import { MAX_REASON_CHARS, POLICY_KEYS } from '../../main/policy/schema.js';
import { policyTemplates, withKeyTable } from '../../main/policy/templates.js';
import { REPO_ROOT } from '../support/ward-cli.js';

const parseXml = (text: string) => new new Window().DOMParser().parseFromString(text, 'application/xml');

describe('policy templates generated from the schema', () => {
  it('test_checked_in_templates_and_readme_table_are_current', () => {
    for (const [file, content] of Object.entries(policyTemplates())) {
      expect(fs.readFileSync(path.join(REPO_ROOT, file), 'utf8'), `${file} is stale: run npm run build`).toBe(content);
    }
    const readme = fs.readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8');
    expect(readme, 'README.md key table is stale: run npm run build').toBe(withKeyTable(readme));
  });

  it('test_every_key_is_in_every_template', () => {
    const templates = policyTemplates();
    const schema = JSON.parse(templates['policy-templates/ward-policy.schema.json']!) as { properties: Record<string, unknown> };
    const admx = templates['policy-templates/windows/ward.admx']!;
    for (const key of POLICY_KEYS) {
      expect(schema.properties[key.key], key.key).toBeDefined();
      expect(admx, key.key).toMatch(new RegExp(`(valueName="${key.key}"|key="Software\\\\Policies\\\\Ward\\\\${key.key})`));
    }
  });

  it('test_what_the_admx_policies_write_the_registry_reader_reads_back_as_the_examples', () => {
    const templates = policyTemplates();
    const admx = parseXml(templates['policy-templates/windows/ward.admx']!);
    const adml = parseXml(templates['policy-templates/windows/en-US/ward.adml']!);
    const strings = new Set([...adml.querySelectorAll('string')].map((node) => node.getAttribute('id')));
    // As Group Policy would write each mandatory policy with its key's example value.
    const keys = new Map<string, string[]>();
    const put = (regKey: string, line: string) => keys.set(regKey, [...(keys.get(regKey) ?? []), line]);
    const examples = Object.fromEntries(POLICY_KEYS.map((key) => [key.key, key.example]));
    for (const policy of admx.querySelectorAll('policy')) {
      const name = policy.getAttribute('name')!;
      expect(strings.has(name) && strings.has(`${name}_explain`), `ADML strings for ${name}`).toBe(true);
      if (name.endsWith('_recommended')) continue;
      const regKey = `HKEY_LOCAL_MACHINE\\${policy.getAttribute('key')!.replace(/^Software/, 'SOFTWARE')}`;
      const valueName = policy.getAttribute('valueName');
      if (valueName !== null) {
        put(regKey, `    ${valueName}    REG_DWORD    0x${Number(examples[valueName] === true).toString(16)}`);
        continue;
      }
      const element = policy.querySelector('elements')!.firstElementChild!;
      const value = element.getAttribute('valueName');
      if (element.tagName.toLowerCase() === 'list') {
        const listKey = `HKEY_LOCAL_MACHINE\\${element.getAttribute('key')!.replace(/^Software/, 'SOFTWARE')}`;
        const [, keyName, kind] = /Ward\\([^\\]+)(?:\\(.+))?$/.exec(listKey)!;
        const entries = (kind === undefined ? examples[keyName!] : (examples[keyName!] as Record<string, string[]>)[kind]) as string[] | undefined;
        (entries ?? []).forEach((entry, index) => put(listKey, `    ${index + 1}    REG_SZ    ${entry}`));
      } else if (element.tagName.toLowerCase() === 'decimal') {
        put(regKey, `    ${value}    REG_DWORD    0x${(examples[value!] as number).toString(16)}`);
      } else {
        const example = examples[value!];
        put(regKey, `    ${value}    REG_SZ    ${typeof example === 'string' ? example : JSON.stringify(example)}`);
      }
    }
    const output = ['', ...[...keys].flatMap(([key, lines]) => [key, ...lines, ''])].join('\r\n');
    const read = registryDocument(output, 'HKEY_LOCAL_MACHINE\\SOFTWARE\\Policies\\Ward');
    expect(read.problems).toEqual([]);
    const reading = mergeDocuments([read.document]);
    expect(reading.errors).toEqual([]);
    expect(reading.warnings).toEqual([]);
    for (const key of POLICY_KEYS) {
      const expected = key.key === 'caps' ? { read: ['/srv/projects'], net: ['*.example.com'] } : key.example;
      expect(reading.settings.get(key.key)?.value, key.key).toEqual(expected);
    }
  });

  it('test_the_mobileconfig_payload_is_a_policy_ward_reads_without_errors_or_warnings', () => {
    const profile = parsePlist(policyTemplates()['policy-templates/macos/dev.ward.desktop.mobileconfig']!) as { PayloadContent: Array<Record<string, unknown>> };
    const payload = profile.PayloadContent[0]!;
    expect(payload.PayloadType).toBe('dev.ward.desktop');
    // MDM writes the payload's own keys, without the Payload* ones, to the managed preferences.
    const { recommended, ...mandatory } = Object.fromEntries(Object.entries(payload).filter(([key]) => !key.startsWith('Payload')));
    const reading = mergeDocuments([{ source: 'profile', mandatory, recommended: recommended as Record<string, unknown> }]);
    expect(reading.errors).toEqual([]);
    expect(reading.warnings).toEqual([]);
    expect(reading.settings.size).toBe(POLICY_KEYS.length);
  });

  it('test_the_admx_text_limits_are_the_schemas_and_the_file_store_is_called_plaintext_everywhere', () => {
    const templates = policyTemplates();
    const schema = JSON.parse(templates['policy-templates/ward-policy.schema.json']!) as { properties: Record<string, { maxLength?: number }> };
    const admx = parseXml(templates['policy-templates/windows/ward.admx']!);
    const texts = [...admx.querySelectorAll('text')].filter((node) => !node.getAttribute('id')!.endsWith('_recommended'));
    expect(texts.length).toBeGreaterThan(0);
    for (const text of texts) {
      const key = text.getAttribute('valueName')!;
      const limit = schema.properties[key]!.maxLength;
      if (limit !== undefined) expect(Number(text.getAttribute('maxLength')), key).toBe(limit);
    }
    expect(texts.find((node) => node.getAttribute('valueName') === 'reason')?.getAttribute('maxLength')).toBe(String(MAX_REASON_CHARS));
    const readme = fs.readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8');
    for (const [file, text] of [...Object.entries(templates), ['README.md', readme]]) {
      expect(text, file).not.toMatch(/encrypted file/i);
    }
    expect(templates['policy-templates/windows/en-US/ward.adml']).toContain('file (plaintext files readable only by the user: 0600 files in a 0700 folder');
  });
});
