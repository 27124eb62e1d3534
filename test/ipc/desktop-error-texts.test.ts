/**
 * Issue 31: no error text the desktop shows tells the person to run a terminal command. Every
 * error main can throw is found in the source (each `new WardError(…)` outside the CLI adapter);
 * one whose message names a `ward …` command or a `--flag` carries a desktop wording (its
 * `desktop` option), which names no command either, and the IPC adapter sends that wording.
 */
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { WardError, WARD_ERROR_CODES } from '../../main/base/errors.js';
import { dispatch, type Handlers } from '../../main/ipc/dispatch.js';
import { IPC_ERROR_CODES } from '../../preload/contract.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
/** What names a terminal command in a message's source: a `ward` command, its helpers, or a flag. */
const TERMINAL = /\bward [a-z]|wardCommand\(|this\.command\(|howToSet\(|(^|[\s"'`(])--[a-z]/;

/**
 * Errors only the CLI can meet (its flags and its argument parsing): the desktop never calls
 * the code that throws them. Each with why.
 */
const CLI_ONLY: Readonly<Record<string, string>> = {
  'main/export/bundle.ts': '--signer of `ward verify-bundle` and `ward review`',
  'main/export/bundle-writer.ts': '--out of `ward export` (the desktop picks a file in a save dialog)',
  'main/permissions/grants.ts': 'parsing `ward run` permission flags',
  'main/app/changes.ts': '--to and --force of `ward rewind` (the desktop rewinds by event, and never forces)',
  'main/credentials/model-credential.ts': 'model_key_missing, which the IPC adapter replaces with the setup card sentence',
  'main/agents/service.ts#usage': '--upstream of `ward agents create`',
  'main/connections/manager.ts': '--client-id/--client-secret of `ward connections add`',
  'main/connections/config.ts': 'the flags of `ward connections add` (the desktop form has its own field errors)',
  'main/auth/issuer-url.ts': '--allow-insecure-http of `ward login`',
  'main/auth/session.ts': 'the OpenID sign-in of `ward login`/`whoami`/`logout`: the desktop has none',
  'main/auth/tokens.ts': 'the same sign-in\'s stored tokens',
};

interface Thrown {
  readonly where: string;
  readonly code: string;
  readonly message: string;
  readonly desktop: string | null;
}

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'cli' ? [] : sourceFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

/** Every `new WardError(code, message, options)` in main/ (not main/cli/), with its texts' source. */
function thrownErrors(): Thrown[] {
  const found: Thrown[] = [];
  for (const file of sourceFiles(path.join(ROOT, 'main'))) {
    const source = ts.createSourceFile(file, fs.readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
    const visit = (node: ts.Node): void => {
      if (ts.isNewExpression(node) && node.expression.getText(source) === 'WardError' && node.arguments !== undefined && node.arguments.length >= 2) {
        const [code, message, options] = node.arguments;
        const desktop = options !== undefined && ts.isObjectLiteralExpression(options) ? options.properties.find((property) => property.name?.getText(source) === 'desktop') : undefined;
        const { line } = source.getLineAndCharacterOfPosition(node.getStart(source));
        found.push({
          where: `${path.relative(ROOT, file)}:${line + 1}`,
          code: code!.getText(source).replace(/['"]/g, ''),
          message: message!.getText(source),
          desktop: desktop === undefined ? null : desktop.getText(source),
        });
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return found;
}

function cliOnly(error: Thrown): boolean {
  const file = error.where.split(':')[0]!;
  return file in CLI_ONLY || `${file}#${error.code}` in CLI_ONLY;
}

describe('error texts the desktop shows (issue 31)', () => {
  const errors = thrownErrors();

  it('test_every_error_main_throws_is_found_with_a_code_the_ipc_contract_names', () => {
    expect(errors.length).toBeGreaterThan(100);
    const codes = new Set<string>([...WARD_ERROR_CODES, ...Object.values(IPC_ERROR_CODES)]);
    // A code passed through a variable is checked where the variable is made, by the type checker.
    expect(errors.filter((error) => /^[a-z_]+$/.test(error.code) && !codes.has(error.code)).map((error) => error.where)).toEqual([]);
  });

  it('test_no_desktop_error_text_names_a_terminal_command', () => {
    const naming = errors.filter((error) => TERMINAL.test(error.message) && !cliOnly(error));
    expect(naming.length).toBeGreaterThan(10);
    expect(naming.filter((error) => error.desktop === null).map((error) => `${error.where} ${error.code}: ${error.message.slice(0, 100)}`)).toEqual([]);
    expect(errors.filter((error) => error.desktop !== null && TERMINAL.test(error.desktop)).map((error) => `${error.where}: ${error.desktop}`)).toEqual([]);
  });

  it('test_the_ipc_adapter_sends_the_desktop_wording_and_the_cli_keeps_its_own', async () => {
    const error = new WardError('invalid_config', 'tool weather/forecast is turned off; turn it on with "ward connections tools weather --enable forecast"', { desktop: 'Tool weather/forecast is turned off: turn it on on the Connections page.' });
    expect(error.message).toContain('ward connections tools');
    const handlers = { 'namespaces.list': () => Promise.reject(error) } as unknown as Handlers;
    const result = await dispatch(handlers, { kind: 'window' } as never, 'namespaces.list', {});
    expect(result).toEqual({ ok: false, error: { code: 'invalid_config', message: 'Tool weather/forecast is turned off: turn it on on the Connections page.' } });
  });
});
