/**
 * The model provider a namespace's runs talk to (a profile: base URL and model) and the model
 * credential. Profiles come from `<namespace dir>/model-profiles.json` when present, and the
 * profile "default" can also come from the environment (WARD_MODEL_BASE_URL or
 * ANTHROPIC_BASE_URL, WARD_MODEL or ANTHROPIC_MODEL; WARD_ALLOW_INSECURE_MODEL_URL=1 is the override).
 * Configuration fails closed (L1): a malformed file, an unknown profile or a non-loopback
 * `http://` URL without an explicit override is refused.
 */
import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { WardError } from '../base/errors.js';
import { requireServerUrl, type UrlRefusal } from '../base/url-policy.js';
import { namespaceDir, type Namespace } from '../namespaces/namespace.js';

export const DEFAULT_BASE_URL = 'https://api.anthropic.com';
export const DEFAULT_MODEL = 'claude-sonnet-4-5';
export const PROFILES_FILE = 'model-profiles.json';

export interface ModelProfile {
  readonly name: string;
  readonly baseUrl: string;
  readonly model: string;
  /**
   * A company LLM gateway reached with the namespace's OpenID Connect sign-in (`ward login`) as a
   * bearer token instead of a model key; null for a key (or subscription token).
   */
  readonly signIn: { readonly issuer: string; readonly clientId: string } | null;
}

const ProfileSchema = z
  .object({
    baseUrl: z.string().max(2048),
    model: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._:@\-[\]]{0,127}$/),
    allowInsecureHttp: z.boolean().default(false),
    signIn: z.strictObject({ issuer: z.string().min(1).max(2048), clientId: z.string().min(1).max(256) }).optional(),
  })
  .strict();
const ProfilesFileSchema = z.object({ profiles: z.record(z.string().regex(/^[a-z0-9][a-z0-9-]{0,31}$/), ProfileSchema) }).strict();

function baseUrlProblem(refusal: UrlRefusal, raw: string): string {
  switch (refusal.reason) {
    case 'not_a_url':
      return `${JSON.stringify(raw.slice(0, 100))} is not a URL`;
    case 'credentials':
      return 'the model base URL must not carry credentials';
    case 'scheme':
      return `the model base URL must be https:// (got ${refusal.url.protocol})`;
    case 'insecure_http':
      return `http:// is allowed only for loopback hosts (got ${refusal.url.hostname}); use https:// or set the explicit insecure-HTTP override`;
  }
}

/** L1, by Ward's one URL policy (main/base/url-policy.ts). */
export function checkBaseUrl(raw: string, allowInsecureHttp: boolean, source: string): string {
  const url = requireServerUrl(raw, allowInsecureHttp, (refusal) => new WardError('invalid_config', `${source}: ${baseUrlProblem(refusal, raw)}`));
  return url.href.replace(/\/$/, '');
}

export function resolveModelProfile(home: string, ns: Namespace, name: string, env: NodeJS.ProcessEnv): ModelProfile {
  const file = path.join(namespaceDir(home, ns), PROFILES_FILE);
  if (fs.existsSync(file)) {
    let raw: unknown;
    try {
      raw = JSON.parse(fs.readFileSync(file, 'utf8'));
    } catch (error) {
      throw new WardError('invalid_config', `${file} is not valid JSON`, { cause: error });
    }
    const parsed = ProfilesFileSchema.safeParse(raw);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      throw new WardError('invalid_config', `${file}: ${issue.path.join('.')}: ${issue.message}`);
    }
    const profile = parsed.data.profiles[name];
    if (profile !== undefined) return { name, baseUrl: checkBaseUrl(profile.baseUrl, profile.allowInsecureHttp, `${file} profile ${name}`), model: profile.model, signIn: profile.signIn ?? null };
  }
  if (name !== 'default') throw new WardError('invalid_config', `no model profile ${JSON.stringify(name)} in namespace ${ns.name} (define it in ${file})`);
  const insecure = env.WARD_ALLOW_INSECURE_MODEL_URL === '1';
  const model = env.WARD_MODEL || env.ANTHROPIC_MODEL || DEFAULT_MODEL;
  if (!ProfileSchema.shape.model.safeParse(model).success) throw new WardError('invalid_config', `WARD_MODEL: ${JSON.stringify(model.slice(0, 60))} is not a model name`);
  return { name, baseUrl: checkBaseUrl(env.WARD_MODEL_BASE_URL || env.ANTHROPIC_BASE_URL || DEFAULT_BASE_URL, insecure, env.WARD_MODEL_BASE_URL ? 'WARD_MODEL_BASE_URL' : 'ANTHROPIC_BASE_URL'), model, signIn: null };
}
