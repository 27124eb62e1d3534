/**
 * The generated JSON Schema (what admins' editors check) and Ward's own reader give the same
 * verdict on every sample: a policy one accepts, the other accepts too. Unknown keys are accepted
 * by both (Ward warns about them and ignores them).
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import { parsePolicy } from '../../main/policy/policy.js';
import { policyTemplates } from '../../main/policy/templates.js';

const SAMPLES: ReadonlyArray<readonly [string, object, boolean]> = [
  ['an empty policy', {}, true],
  ['every example of the README', { reason: 'Example Corp IT (it@example.com)', cliVersions: ['2.1.328'], providers: ['api.anthropic.com'], forbid: ['run'], caps: { read: ['/srv/projects'], net: ['*.example.com'] }, allowedConnections: ['https://mcp.example.com/*'], sandbox: 'require', recommended: { approvalTimeoutSeconds: 300 } }, true],
  ['providers: allow-all', { providers: ['*'] }, false],
  ['providers: a wildcard of one label', { providers: ['*.com'] }, false],
  ['providers: a URL instead of a host', { providers: ['https://api.anthropic.com'] }, false],
  ['providers: host:port and a wildcard', { providers: ['proxy.example.com:8443', '*.example.com', '[::1]:8080'] }, true],
  ['caps: a relative read path', { caps: { read: ['srv/projects'] } }, false],
  ['caps: a relative write path', { caps: { write: ['./out'] } }, false],
  ['caps: an unknown kind', { caps: { exec: ['ls'] } }, false],
  ['caps: every kind well formed', { caps: { read: ['/srv'], write: ['/srv/out'], net: ['api.example.com:443'], run: ['git', '/usr/bin/make'], env: ['HOME'], mcp: ['tracker/*', 'files/read'] } }, true],
  ['caps: a bad env name and mcp pattern', { caps: { env: ['1BAD'], mcp: ['tracker'] } }, false],
  ['clientMetadataUrl over plain http', { clientMetadataUrl: 'http://it.example.com/ward.json' }, false],
  ['clientMetadataUrl over https', { clientMetadataUrl: 'https://it.example.com/ward.json' }, true],
  ['a managed connection over plain http', { managedConnections: [{ name: 'tracker', url: 'http://mcp.example.com/mcp' }] }, false],
  ['a managed connection over https and a local one', { managedConnections: [{ name: 'tracker', url: 'https://mcp.example.com/mcp' }, { name: 'files', command: '/opt/mcp/files', args: ['--root', '/srv'] }] }, true],
  ['an unknown key', { colour: 'blue', recommended: { shade: 'dark' } }, true],
  ['a retired key', { connections: ['github'] }, false],
  ['a mandatory-only key as recommended', { recommended: { forbid: ['run'] } }, false],
  ['a reason too long', { reason: 'x'.repeat(501) }, false],
  ['a timeout out of range', { approvalTimeoutSeconds: 5 }, false],
  ['version 2', { version: 2 }, false],
  ['a namespace with capitals', { namespace: 'Work' }, false],
];

function wardAccepts(policy: object): boolean {
  try {
    parsePolicy(JSON.stringify(policy), 'sample');
    return true;
  } catch {
    return false;
  }
}

describe('the JSON Schema and Ward agree', () => {
  it('test_every_sample_gets_the_same_verdict_from_a_json_schema_validator_and_from_ward', () => {
    const ajv = new Ajv2020({ strict: true, allErrors: true });
    addFormats.default(ajv);
    const validate = ajv.compile(JSON.parse(policyTemplates()['policy-templates/ward-policy.schema.json']!) as object);
    expect(SAMPLES.length).toBeGreaterThanOrEqual(15);
    const verdicts = SAMPLES.map(([name, policy]) => ({ name, schema: validate(policy), ward: wardAccepts(policy) }));
    expect(verdicts).toEqual(SAMPLES.map(([name, , accepted]) => ({ name, schema: accepted, ward: accepted })));
  });
});
