/**
 * Every kind of bundle Ward exports verifies with npm's @sigstore/verify, the tool reviewers
 * already have: its DSSE envelope in a Sigstore bundle v0.3 with the signer's public key as
 * verification material (no transparency log, as for any key-signed bundle), checked by the
 * library's own Verifier; a changed statement or another key is refused by it.
 */
import { createPublicKey } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { bundleFromJSON, BUNDLE_V03_MEDIA_TYPE } from '@sigstore/bundle';
import { toSignedEntity, toTrustMaterial, Verifier } from '@sigstore/verify';
import { describe, expect, it } from 'vitest';
import { generateSigningKey, loadSigningKey } from '../../main/export/signing.js';
import { seedConversation } from '../support/seed.js';
import { tempDir } from '../support/temp.js';
import { ward } from '../support/ward-cli.js';
import { appendTurn, makeBundle, tarEntries, writeTar } from './support.js';

type TrustedRoot = Parameters<typeof toTrustMaterial>[0];
const NO_LOGS = { mediaType: 'application/vnd.dev.sigstore.trustedroot+json;version=0.1', tlogs: [], certificateAuthorities: [], ctlogs: [], timestampAuthorities: [] } as unknown as TrustedRoot;

/** The bundle's envelope as a Sigstore bundle v0.3 naming its key by fingerprint. */
function sigstoreBundle(file: string) {
  const entries = new Map(tarEntries(file));
  const envelope = JSON.parse(entries.get('statement.dsse.json')!.toString('utf8')) as { payload: string; payloadType: string; signatures: Array<{ keyid: string; sig: string }> };
  return bundleFromJSON({
    mediaType: BUNDLE_V03_MEDIA_TYPE,
    verificationMaterial: { publicKey: { hint: envelope.signatures[0]!.keyid }, tlogEntries: [], timestampVerificationData: { rfc3161Timestamps: [] } },
    dsseEnvelope: envelope,
  });
}

/** @sigstore/verify's verdict with `pem` as the one key it trusts; throws what it refuses. */
function verifyWith(file: string, pem: string): void {
  const trust = toTrustMaterial(NO_LOGS, () => ({ publicKey: createPublicKey(pem), validFor: () => true }));
  new Verifier(trust, { tlogThreshold: 0, ctlogThreshold: 0, timestampThreshold: 0 }).verify(toSignedEntity(sigstoreBundle(file)));
}

describe('exported bundles and @sigstore/verify', () => {
  it('test_every_kind_of_bundle_verifies_with_the_signers_key_and_fails_with_another', () => {
    const made = [
      makeBundle(0),
      makeBundle(2),
      makeBundle(1, { uncertainRuns: ['00000000-0000-4000-8000-0000000000aa'] }),
      makeBundle(1, { title: 'déjà vu 😀 日本語', after: (store, id) => appendTurn(store, id, '00000000-0000-4000-8000-0000000000a1', 'line\u2028sep \u0001 "q"') }),
    ];
    const stranger = loadSigningKey(generateSigningKey());
    for (const bundle of made) {
      expect(() => verifyWith(bundle.file, bundle.key.pem)).not.toThrow();
      expect(() => verifyWith(bundle.file, stranger.pem)).toThrow(/signature verification failed/);
    }
    // The statement changed after signing (one more event claimed): refused with the signer's own key.
    const [first] = made;
    const changed = writeTar(
      path.join(first!.dir, 'changed.wardbundle'),
      tarEntries(first!.file).map(([name, data]): [string, Buffer] => {
        if (name !== 'statement.dsse.json') return [name, data];
        const envelope = JSON.parse(data.toString('utf8')) as { payload: string };
        const payload = Buffer.from(Buffer.from(envelope.payload, 'base64').toString('utf8').replace('"events":0', '"events":1')).toString('base64');
        expect(payload).not.toBe(envelope.payload);
        return [name, Buffer.from(JSON.stringify({ ...envelope, payload }))];
      }),
    );
    expect(() => verifyWith(changed, first!.key.pem)).toThrow(/signature verification failed/);
  });

  it('test_a_real_ward_export_with_and_without_the_namespace_named_verifies_with_the_key_ward_keys_export_public_writes', async () => {
    const home = tempDir();
    const { core, store, conversation } = seedConversation(home);
    appendTurn(store, conversation.id, '00000000-0000-4000-8000-000000000001', 'It is sunny in Lisbon.');
    core.close();
    const env = { WARD_HOME: home, DBUS_SESSION_BUS_ADDRESS: process.env.DBUS_SESSION_BUS_ADDRESS };
    const dir = tempDir();
    const keyFile = path.join(dir, 'signer.pem');
    expect((await ward(['keys', 'export-public', '--out', keyFile], { env })).code).toBe(0);
    for (const [name, extra] of [['plain', []], ['named', ['--name-namespace']]] as const) {
      const file = path.join(dir, `${name}.wardbundle`);
      const exported = await ward(['export', conversation.id, '--out', file, ...extra], { env });
      expect(exported.code, exported.stderr).toBe(0);
      expect(() => verifyWith(file, new Map(tarEntries(file)).get('signer.pub.pem')!.toString('utf8'))).not.toThrow();
      expect(() => verifyWith(file, fs.readFileSync(keyFile, 'utf8'))).not.toThrow();
    }
  });
});
