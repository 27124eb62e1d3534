/**
 * R2/R3: the child's environment is built from an allowlist, never from `process.env` whole.
 * It carries the model-provider settings, the namespace's private CLAUDE_CONFIG_DIR, and the
 * switches that turn off telemetry, error reporting, auto-update and non-essential traffic.
 */
/** Names copied from Ward's own environment when present. */
export const INHERITED_ENV = ['PATH', 'HOME', 'USER', 'LOGNAME', 'LANG', 'LC_ALL', 'LC_CTYPE', 'TZ', 'TMPDIR', 'SYSTEMROOT', 'SystemRoot', 'TEMP', 'TMP', 'USERPROFILE', 'APPDATA', 'LOCALAPPDATA', 'PATHEXT', 'COMSPEC', 'ComSpec'] as const;

export const QUIET_SWITCHES = {
  CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
  DISABLE_AUTOUPDATER: '1',
  DISABLE_TELEMETRY: '1',
  DISABLE_ERROR_REPORTING: '1',
} as const;

/**
 * How the child reaches the model: the run's gateway URL and run capability (S4, G1), never the
 * real credential. `mode` says which variable carries the capability, so the CLI sends the headers
 * its mode needs (a subscription token asks for OAuth headers).
 */
export interface ModelAccess {
  readonly baseUrl: string;
  /** The run's capability for the gateway, in the place the CLI reads its key from. */
  readonly capability: string;
  readonly mode: 'api-key' | 'oauth-token';
}

export interface ChildEnvInput {
  readonly inherited: NodeJS.ProcessEnv;
  readonly model: ModelAccess;
  readonly configDir: string;
  /** Variables the run's `env` grants pass from Ward's environment (Deno's --allow-env). */
  readonly granted?: Readonly<Record<string, string>>;
}

export function buildChildEnv(input: ChildEnvInput): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of INHERITED_ENV) {
    const value = input.inherited[name];
    if (typeof value === 'string' && value !== '') env[name] = value;
  }
  Object.assign(env, input.granted ?? {});
  Object.assign(env, QUIET_SWITCHES);
  env.ANTHROPIC_BASE_URL = input.model.baseUrl;
  env.CLAUDE_CONFIG_DIR = input.configDir;
  if (input.model.mode === 'api-key') env.ANTHROPIC_API_KEY = input.model.capability;
  else env.CLAUDE_CODE_OAUTH_TOKEN = input.model.capability;
  // Belt and braces: nothing that changes how the binary loads code.
  for (const name of Object.keys(env)) if (/^(LD_|DYLD_)/.test(name)) delete env[name];
  return env;
}
