import { escapeForDisplay } from '../../../common/display.js';
import { doctorChecks, type DoctorCheck } from '../../app/doctor.js';
import { COMMON_OPTIONS, parseCommandArgs, type Command } from '../command.js';
import { EXIT, exitCodeFor, isWardError, type ExitCode } from '../../base/errors.js';
import type { WardApp } from '../../app/ward-app.js';
import { writeJson, writeLine } from '../io.js';
import { spinnerOn } from '../spinner.js';

const LABEL: Record<DoctorCheck['status'], string> = { ok: 'ok', warning: 'warn', error: 'FAIL', not_configured: 'not configured' };

export const doctorCommand: Command = {
  name: 'doctor',
  usage: 'ward doctor [--self-test] [--provider [--namespace NS]] [--json]',
  async run(args, { io, app }) {
    const { values } = parseCommandArgs(
      this,
      args,
      { json: COMMON_OPTIONS.json, namespace: COMMON_OPTIONS.namespace, 'self-test': { type: 'boolean', default: false }, provider: { type: 'boolean', default: false } },
      false,
    );
    // --self-test runs the pinned CLI once against a built-in offline endpoint.
    // A broken policy is the policy check's error; the other checks then go by the environment alone.
    const policy = () => {
      try {
        return app().policy;
      } catch {
        return null;
      }
    };
    // Each check is printed as it finishes (the self-test alone takes seconds); on a terminal a
    // spinner names the one running.
    const spinner = values.json ? null : spinnerOn(io.stderr, [io.stdout]);
    const print = (check: DoctorCheck) => {
      spinner?.clear();
      if (values.json) writeJson(io.stdout, check);
      else writeLine(io.stdout, `${LABEL[check.status].padEnd(14)} ${check.check.padEnd(22)} ${escapeForDisplay(check.detail)}`);
    };
    const checking = (what: string) => spinner?.show(`checking ${what}…`);
    let checks: DoctorCheck[];
    let provider: Awaited<ReturnType<typeof checkProvider>> | undefined;
    try {
      checks = await doctorChecks(app().folder, io.env, policy, values['self-test'], { checking, checked: print });
      checking('the model setup');
      checks.push(await checkModelSetup(app(), values.namespace, io.env));
      print(checks.at(-1)!);
      if (values.provider) {
        checking('the model provider');
        provider = await checkProvider(app(), values.namespace);
        print(provider.check);
      }
    } finally {
      spinner?.clear();
    }
    // The provider's answer has its own exit code, so a script can tell a wrong key from no network.
    if (provider !== undefined && provider.exit !== EXIT.ok) return provider.exit;
    return checks.some((check) => check.status === 'error') ? EXIT.failed : EXIT.ok;
  },
};

/**
 * Where the namespace's model is and whether a key is there to reach it, without a call: a
 * plain `ward doctor` that said "ok" with no key stored and the endpoint nowhere was no help.
 */
async function checkModelSetup(app: WardApp, namespace: string | undefined, env: NodeJS.ProcessEnv): Promise<DoctorCheck> {
  const check = 'model';
  let where: string;
  let ns: ReturnType<WardApp['namespaces']['existing']>;
  try {
    // The namespace as named, without opening (or creating) its database: doctor changes nothing.
    ns = app.namespaces.existing(namespace);
    const provider = app.settings.modelProvider(ns);
    where = `${provider.baseUrl}, model ${provider.model} (WARD_MODEL_BASE_URL and WARD_MODEL choose them, or the namespace's model profile)`;
  } catch (error) {
    if (!isWardError(error)) throw error;
    return { check, status: 'error', detail: `where the model is cannot be read: ${error.message}` };
  }
  let stored: boolean;
  try {
    stored = (await app.settings.keyStatus(ns)).set;
  } catch (error) {
    if (!isWardError(error)) throw error;
    return { check, status: 'warning', detail: `${where}; whether a key is stored for namespace ${ns.name} is unknown: the credential store did not answer (see the keychain line)` };
  }
  if (stored) return { check, status: 'ok', detail: `${where}; a key is stored for namespace ${ns.name}` };
  const fromEnv = ['ANTHROPIC_API_KEY', 'CLAUDE_CODE_OAUTH_TOKEN'].find((name) => (env[name] ?? '') !== '');
  if (fromEnv !== undefined) return { check, status: 'ok', detail: `${where}; no key is stored for namespace ${ns.name}, so runs use ${fromEnv} from the environment` };
  return { check, status: 'warning', detail: `${where}; no key for namespace ${ns.name}: store one with "ward --namespace ${ns.name} provider set-key"` };
}

/**
 * --provider: the desktop's "Test connection" (one free token count, nothing generated). Exit 0
 * when the provider accepts the key, 1 for an HTTP refusal, 7 when it cannot be reached, 5 with
 * no credential stored.
 */
async function checkProvider(app: WardApp, namespace: string | undefined): Promise<{ check: DoctorCheck; exit: ExitCode }> {
  const store = app.namespaces.fromFlag(namespace);
  const name = `model provider (${store.namespace.name})`;
  try {
    const test = await app.settings.testProvider(store);
    const check: DoctorCheck = { check: name, status: test.ok ? 'ok' : 'error', detail: test.message, data: { namespace: store.namespace.name, status: test.status, durationMs: test.durationMs } };
    return { check, exit: test.ok ? EXIT.ok : test.status === 0 ? EXIT.unavailable : EXIT.failed };
  } catch (error) {
    if (!isWardError(error)) throw error;
    return { check: { check: name, status: 'error', detail: error.message, data: { namespace: store.namespace.name, code: error.code } }, exit: exitCodeFor(error.code) };
  }
}
