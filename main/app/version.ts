/** What `ward --version` prints: Ward's own version and the Claude CLI it is pinned to (R1). Light: no store or native module. */
import { COMMITTED_PIN, wardVersion } from '../runner/pin.js';

export { wardVersion };

/** The pinned Claude CLI's version. */
export const PINNED_CLI_VERSION: string = COMMITTED_PIN.version;
