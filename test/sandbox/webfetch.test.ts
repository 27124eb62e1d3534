/**
 * S3: WebFetch reaches a granted host from inside the sandbox. The pinned CLI's domain check
 * (a call to Anthropic before every fetch) would be blocked there, so the child's settings turn it off.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { AuditRecord } from '../../main/permissions/audit.js';
import { parsePermissionFlags } from '../../main/permissions/grants.js';
import { toolResultsSeen, userTextIn } from '../fixtures/model-provider/provider.js';
import { scriptedPerson } from '../support/people.js';
import { site } from '../support/sites.js';
import { tempDir } from '../support/temp.js';
import { closeHarnessesAfterEach, payloads, startHarness, type Harness } from '../app/runs/harness.js';

let harness: Harness | undefined;
closeHarnessesAfterEach();

/** A throwaway self-signed certificate for 127.0.0.1 (WebFetch upgrades every http URL to https). */
function certificate(): { key: string; cert: string; certFile: string } {
  const dir = tempDir('ward-webfetch-tls-');
  const keyFile = path.join(dir, 'key.pem');
  const certFile = path.join(dir, 'cert.pem');
  const made = spawnSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', keyFile, '-out', certFile, '-days', '2', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'], { encoding: 'utf8' });
  if (made.status !== 0) throw new Error(`openssl could not make a test certificate: ${made.stderr}`);
  return { key: fs.readFileSync(keyFile, 'utf8'), cert: fs.readFileSync(certFile, 'utf8'), certFile };
}

describe('WebFetch in the sandbox (S3)', () => {
  it('test_webfetch_of_a_granted_https_host_reads_the_page_asking_no_one_and_calling_no_domain_check', async () => {
    const tls = certificate();
    const page = await site('the granted page', tls);
    const asker = scriptedPerson();
    harness = await startHarness(
      [
        { blocks: [{ type: 'tool_use', name: 'WebFetch', input: { url: page.url, prompt: 'What does the page say?' } }] },
        // WebFetch hands the page to the model with the prompt (a second call) and returns its answer.
        { blocks: [{ type: 'text', text: 'Summary: the page greets from the granted page.' }] },
        { blocks: [{ type: 'text', text: 'done' }] },
      ],
      // The child trusts the test's certificate the way it would a company's own CA.
      { prompter: asker, env: { NODE_EXTRA_CA_CERTS: tls.certFile } },
    );
    const flags = [`--allow-net=${page.hostPort}`, '--allow-env=NODE_EXTRA_CA_CERTS', `--allow-read=${path.dirname(tls.certFile)}`];
    const handle = harness.service.startTurn({ namespace: harness.ns, prompt: 'fetch it', permissions: parsePermissionFlags(flags, '/') });
    expect(await handle.done).toMatchObject({ state: 'succeeded' });
    expect(page.hits()).toBe(1);
    expect(userTextIn(harness.provider.conversationRequests()[1]!)).toContain('hello from the granted page');
    expect(toolResultsSeen(harness.provider)).toEqual([{ text: expect.stringContaining('Summary: the page greets from the granted page.'), isError: false }]);
    // With the domain check on, the CLI first called api.anthropic.com: asked about, denied, and the fetch refused.
    expect(asker.questions).toEqual([]);
    expect(payloads<AuditRecord>(harness.events(handle.conversationId), 'permission_decision')).not.toContainEqual(expect.objectContaining({ decision: 'deny' }));
  });
});
