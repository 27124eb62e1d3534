/**
 * The certificates an audit sink's TLS connection trusts: Node's roots plus the policy's caFile.
 * Built once per caFile text, from the default context (the roots Node already parsed) with the
 * caFile's certificates added: `ca: [...tls.rootCertificates, caFile]` instead parses ~140 PEM
 * roots again for every context, ~50 ms on the event loop of the process that runs a turn.
 */
import tls from 'node:tls';

let trusted: { readonly extraCa: string; readonly context: tls.SecureContext } | undefined;

/** The context for `extraCa` (PEM) on top of Node's roots; undefined means Node's default context. */
export function trustedContext(extraCa: string | undefined): tls.SecureContext | undefined {
  if (extraCa === undefined) return undefined;
  if (trusted?.extraCa !== extraCa) {
    const context = tls.createSecureContext({ minVersion: 'TLSv1.2' });
    // What Node's own createSecureContext does for each `ca` entry; the context keeps the roots.
    (context.context as { addCACert(pem: string): void }).addCACert(extraCa);
    trusted = { extraCa, context };
  }
  return trusted.context;
}
