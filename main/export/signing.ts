/**
 * E1, E2: Ed25519 keys and DSSE envelopes, with Node's own crypto. A key's fingerprint is what
 * `ssh-keygen -l` prints for the same key: "SHA256:" and the unpadded base64 of the SHA-256 of
 * its OpenSSH public key blob; the envelope's keyid is that fingerprint (it is not signed).
 */
import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, sign, verify, type KeyObject } from 'node:crypto';
import { WardError } from '../base/errors.js';

export const FINGERPRINT_PATTERN = /^SHA256:[A-Za-z0-9+/]{43}$/;
/** The statement's media type in the envelope (in-toto attestation framework). */
export const IN_TOTO_PAYLOAD_TYPE = 'application/vnd.in-toto+json';

export interface PublicKey {
  readonly key: KeyObject;
  readonly fingerprint: string;
  /**
   * The fingerprint Ward printed for this key before it matched ssh-keygen (SHA-256 of the
   * SubjectPublicKeyInfo DER): a `--signer` written down from an older export still names it.
   */
  readonly legacyFingerprint: string;
  /** SubjectPublicKeyInfo, PEM: what `ward keys export-public` writes and a bundle carries. */
  readonly pem: string;
}

export interface SigningKey extends PublicKey {
  readonly privateKey: KeyObject;
}

export interface Envelope {
  readonly payloadType: string;
  /** The statement, base64. */
  readonly payload: string;
  readonly signatures: readonly { readonly keyid: string; readonly sig: string }[];
}

const sha256Fingerprint = (data: Buffer): string => `SHA256:${createHash('sha256').update(data).digest('base64').replace(/=+$/, '')}`;

/** An SSH wire-format string: its length as a big-endian uint32, then its bytes. */
function sshString(data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  return Buffer.concat([length, data]);
}

/** The OpenSSH public key blob of an Ed25519 key (RFC 8709): string "ssh-ed25519", string key. */
export function openSshBlob(key: KeyObject): Buffer {
  const raw = Buffer.from(key.export({ format: 'jwk' }).x!, 'base64url');
  return Buffer.concat([sshString(Buffer.from('ssh-ed25519')), sshString(raw)]);
}

function describePublic(key: KeyObject): PublicKey {
  return {
    key,
    fingerprint: sha256Fingerprint(openSshBlob(key)),
    legacyFingerprint: sha256Fingerprint(key.export({ format: 'der', type: 'spki' })),
    pem: key.export({ format: 'pem', type: 'spki' }).toString(),
  };
}

/** Whether `fingerprint` names this key, in today's form or the one older exports printed. */
export function isFingerprintOf(fingerprint: string, key: PublicKey): boolean {
  return fingerprint === key.fingerprint || fingerprint === key.legacyFingerprint;
}

/** A new key, as the PKCS#8 PEM the keychain keeps. */
export function generateSigningKey(): string {
  return generateKeyPairSync('ed25519').privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
}

export function loadSigningKey(privatePem: string): SigningKey {
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey(privatePem);
  } catch (error) {
    throw new WardError('credential_missing', 'the stored export signing key is unreadable; it was left as it is', { cause: error });
  }
  if (privateKey.asymmetricKeyType !== 'ed25519') throw new WardError('credential_missing', 'the stored export signing key is not an Ed25519 key');
  return { ...describePublic(createPublicKey(privateKey)), privateKey };
}

/** A public key from PEM text; `what` names its source in errors. */
export function parsePublicKey(pem: string, what: string): PublicKey {
  let key: KeyObject;
  try {
    key = createPublicKey({ key: pem, format: 'pem' });
  } catch (error) {
    throw new WardError('bundle_invalid', `${what} is not a PEM public key`, { cause: error });
  }
  if (key.asymmetricKeyType !== 'ed25519') throw new WardError('bundle_invalid', `${what} is a ${key.asymmetricKeyType ?? 'unknown'} key, not Ed25519`);
  return describePublic(key);
}

/** DSSE's pre-authentication encoding: what is actually signed. */
export function pae(payloadType: string, body: Buffer): Buffer {
  const type = Buffer.from(payloadType, 'utf8');
  return Buffer.concat([Buffer.from(`DSSEv1 ${type.length} `), type, Buffer.from(` ${body.length} `), body]);
}

/** Wraps a statement; signed when a key is given, else with no signature (an unsigned export). */
export function envelope(body: Buffer, key: SigningKey | null): Envelope {
  const signatures = key === null ? [] : [{ keyid: key.fingerprint, sig: sign(null, pae(IN_TOTO_PAYLOAD_TYPE, body), key.privateKey).toString('base64') }];
  return { payloadType: IN_TOTO_PAYLOAD_TYPE, payload: body.toString('base64'), signatures };
}

/** Whether `signature` is the key's signature of the envelope's body. */
export function verifySignature(payloadType: string, body: Buffer, signature: string, key: PublicKey): boolean {
  let raw: Buffer;
  try {
    raw = Buffer.from(signature, 'base64');
  } catch {
    return false;
  }
  return raw.length === 64 && verify(null, pae(payloadType, body), key.key, raw);
}
