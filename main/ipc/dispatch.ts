/**
 * The one adapter between a transport (Electron IPC, the Chromium test bridge) and the app
 * service: looks the channel up in the contract, parses the payload before any handler runs,
 * and turns every outcome into a typed result with a stable code — never a thrown error (U2).
 */
import type { z } from 'zod';
import { CONTRACT, IPC_ERROR_CODES, isChannelName, type ChannelName, type IpcError, type IpcResult, type ParsedPayload, type Result } from '../../preload/contract.js';
import type { Client } from './client.js';
import { isWardError } from '../base/errors.js';
import { MODEL_SETUP_NEEDED } from '../../common/model-setup.js';

export type Handlers = {
  readonly [C in ChannelName]: (payload: ParsedPayload<C>, client: Client) => Promise<Result<C>> | Result<C>;
};

const MAX_ISSUES_SHOWN = 3;

export function describeIssues(error: z.ZodError): string {
  const shown = error.issues.slice(0, MAX_ISSUES_SHOWN).map((issue) => {
    const where = issue.path.length === 0 ? 'payload' : `payload.${issue.path.map(String).join('.')}`;
    return `${where}: ${issue.message}`;
  });
  const more = error.issues.length > MAX_ISSUES_SHOWN ? ` (and ${error.issues.length - MAX_ISSUES_SHOWN} more)` : '';
  return shown.join('; ') + more;
}

export function failure(code: IpcError['code'], message: string): IpcResult<never> {
  return { ok: false, error: { code, message } };
}

export async function dispatch(handlers: Handlers, client: Client, channel: unknown, payload: unknown): Promise<IpcResult<unknown>> {
  if (!isChannelName(channel)) {
    const shown = typeof channel === 'string' ? JSON.stringify(channel.slice(0, 80)) : typeof channel;
    return failure(IPC_ERROR_CODES.unknownChannel, `unknown channel ${shown}: not in the Ward IPC contract`);
  }
  const parsed = CONTRACT[channel].payload.safeParse(payload);
  if (!parsed.success) return failure(IPC_ERROR_CODES.invalidPayload, `${channel}: ${describeIssues(parsed.error)}`);
  try {
    const handler = handlers[channel] as (payload: unknown, client: Client) => Promise<unknown> | unknown;
    return { ok: true, value: await handler(parsed.data, client) };
  } catch (error) {
    // The CLI's wording names `ward provider set-key`; a window offers its setup card instead.
    if (isWardError(error, 'model_key_missing')) return failure(error.code, MODEL_SETUP_NEEDED);
    // Where the CLI's wording names a terminal command, the desktop has its own.
    if (isWardError(error)) return failure(error.code, error.desktop ?? error.message);
    // Unexpected failures keep their detail in main; the page gets a stable code only.
    console.error(`ward: ${channel} failed`, error);
    return failure('internal', `${channel} failed unexpectedly; see the Ward log`);
  }
}
