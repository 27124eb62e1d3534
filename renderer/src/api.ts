/** The renderer's only way out: `window.ward`, installed by the preload (or the test harness). */
import type { IpcError, IpcResult, WardApi } from '../../preload/contract.js';

declare global {
  interface Window {
    readonly ward?: WardApi;
  }
}

export class IpcFailure extends Error {
  readonly code: string;
  constructor(error: IpcError) {
    super(error.message);
    this.name = 'IpcFailure';
    this.code = error.code;
  }
}

export function wardApi(): WardApi {
  if (window.ward === undefined) throw new Error('window.ward is missing: the page must be loaded by Ward');
  return window.ward;
}

/** Unwraps a typed result; failures become IpcFailure with the stable code. */
export async function unwrap<T>(pending: Promise<IpcResult<T>>): Promise<T> {
  const result = await pending;
  if (!result.ok) throw new IpcFailure(result.error);
  return result.value;
}

export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
