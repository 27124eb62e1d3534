/** What a synchronous call threw, as the WardError a user would see. */
import { isWardError } from '../../main/base/errors.js';

export function wardErrorOf(fn: () => unknown): { code: string; message: string } {
  try {
    fn();
  } catch (error) {
    if (isWardError(error)) return { code: error.code, message: error.message };
    throw error;
  }
  throw new Error('expected a WardError');
}
