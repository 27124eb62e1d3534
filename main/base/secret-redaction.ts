/**
 * Removing the secrets Ward holds from what it passes on (C3): every occurrence is replaced, in
 * text and in a byte stream whose chunks may split a secret anywhere. Values shorter than
 * MIN_SECRET_LENGTH are not treated as secrets: redacting them would mangle ordinary text.
 */
export const REDACTED = '[redacted]';
export const MIN_SECRET_LENGTH = 8;

export function redactSecrets(text: string, secrets: readonly string[]): string {
  return secrets.reduce((out, secret) => (secret.length >= MIN_SECRET_LENGTH ? out.split(secret).join(REDACTED) : out), text);
}

/**
 * Redacts a byte stream as it passes: each chunk goes out at once but for the longest tail that
 * could be the start of a secret, which waits for the next chunk (at most the secret's length
 * less one byte). Bytes are handled as latin1 text, one character per byte, so any encoding
 * (or none) passes unchanged apart from the secrets.
 */
export class StreamRedactor {
  private readonly secrets: readonly string[];
  private held = '';

  constructor(secrets: readonly string[]) {
    this.secrets = secrets.filter((secret) => secret.length >= MIN_SECRET_LENGTH).map((secret) => Buffer.from(secret, 'utf8').toString('latin1'));
  }

  push(chunk: Buffer): Buffer {
    const text = redactSecrets(this.held + chunk.toString('latin1'), this.secrets);
    const keep = this.possibleSecretStart(text);
    this.held = text.slice(text.length - keep);
    return Buffer.from(text.slice(0, text.length - keep), 'latin1');
  }

  /** What was held back: the stream ended, so it cannot become a secret any more. */
  end(): Buffer {
    const rest = Buffer.from(this.held, 'latin1');
    this.held = '';
    return rest;
  }

  /** The length of the longest tail of `text` that is a proper prefix of some secret. */
  private possibleSecretStart(text: string): number {
    let longest = 0;
    for (const secret of this.secrets) {
      for (let length = Math.min(secret.length - 1, text.length); length > longest; length--) {
        if (text.endsWith(secret.slice(0, length))) {
          longest = length;
          break;
        }
      }
    }
    return longest;
  }
}

/** A JSON value with `secrets` removed from every string in it, object keys included. */
export function redactJson<T>(value: T, secrets: readonly string[]): T {
  const walk = (item: unknown): unknown => {
    if (typeof item === 'string') return redactSecrets(item, secrets);
    if (Array.isArray(item)) return item.map(walk);
    if (typeof item === 'object' && item !== null) return Object.fromEntries(Object.entries(item).map(([key, inner]) => [redactSecrets(key, secrets), walk(inner)]));
    return item;
  };
  return walk(value) as T;
}
