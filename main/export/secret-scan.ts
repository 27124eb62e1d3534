/**
 * E3: the journal never held a secret (C3: turns redact what they hand out), and an export checks
 * again, with the secrets Ward holds for the namespace, in every form they could take in a line
 * of journal.jsonl (as is, escaped once inside the payload text, escaped again inside the line).
 */
import { isSecretKeyName } from '../../common/events.js';
import { WardError } from '../base/errors.js';

/** Shorter values are not searched for: they would match ordinary text (as in the turn's redaction). */
const MIN_SECRET_LENGTH = 8;
const MAX_DEPTH = 8;

export interface KnownSecret {
  /** What to call it in a refusal (a keychain account, "the model key from the environment"); never the value. */
  readonly label: string;
  readonly value: string;
}

/** The values inside a stored record (`{"access_token": …}`) that are credentials, and the record itself. */
function credentialValues(raw: string): string[] {
  const found = [raw];
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    return found;
  }
  const walk = (value: unknown, depth: number, secretField: boolean): void => {
    if (depth > MAX_DEPTH) return;
    if (typeof value === 'string') {
      if (secretField) found.push(value);
    } else if (Array.isArray(value)) {
      for (const item of value) walk(item, depth + 1, secretField);
    } else if (value !== null && typeof value === 'object') {
      for (const [key, item] of Object.entries(value as Record<string, unknown>)) walk(item, depth + 1, isSecretKeyName(key));
    }
  };
  walk(parsed, 0, false);
  return found;
}

const escapeJson = (text: string) => JSON.stringify(text).slice(1, -1);

export class SecretScanner {
  private readonly needles: Array<{ readonly text: string; readonly label: string }> = [];

  constructor(secrets: readonly KnownSecret[]) {
    const seen = new Set<string>();
    for (const { label, value } of secrets) {
      for (const secret of credentialValues(value)) {
        if (secret.length < MIN_SECRET_LENGTH) continue;
        for (const text of [secret, escapeJson(secret), escapeJson(escapeJson(secret))]) {
          if (seen.has(text)) continue;
          seen.add(text);
          this.needles.push({ text, label });
        }
      }
    }
  }

  /** Every form of every secret searched for (to redact them where text goes out, as the audit sink's full mode does). */
  get texts(): string[] {
    return this.needles.map((needle) => needle.text);
  }

  get size(): number {
    return this.needles.length;
  }

  /** Refuses text holding a secret, naming the event and which secret (never its value). */
  check(text: string, where: { readonly seq: number; readonly type: string }): void {
    for (const needle of this.needles) {
      if (text.includes(needle.text)) {
        throw new WardError('secret_in_export', `event ${where.seq} (${where.type.slice(0, 40)}) contains a secret Ward holds for this namespace (${needle.label}); nothing was exported`);
      }
    }
  }
}
