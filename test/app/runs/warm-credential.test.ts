/**
 * A warm turn does not read the keychain again while the model key it read stays valid (issue
 * 29): the key is kept in Ward's process, and a key stored or deleted through Ward (any Ward
 * process: `ward provider set-key`, the desktop's settings) is read again at the next turn. Real
 * parts: the OS keychain (gnome-keyring), the pinned CLI, the gateway, the scripted provider.
 */
import { describe, expect, it } from 'vitest';
import { openSecretStore } from '../../../main/credentials/open-store.js';
import { deleteModelCredential, setModelCredential } from '../../../main/credentials/model-credential.js';
import { CANARY_KEY, closeHarnessesAfterEach, processGroupAlive, type Harness } from './harness.js';
import { answer, turn, warmHarness } from './warm.js';

closeHarnessesAfterEach();

const FIRST_KEY = 'sk-ant-warm-credential-first-0001';
const BEHIND_WARDS_BACK = 'sk-ant-warm-credential-behind-0002';
const SET_THROUGH_WARD = 'sk-ant-warm-credential-set-0003';

/** The model key the provider was sent with on the last model call. */
function lastKey(h: Harness): unknown {
  return h.provider.conversationRequests().at(-1)?.headers['x-api-key'];
}

describe('a warm turn keeps the model key it read while nothing it depends on changed (issue 29)', () => {
  it('test_a_warm_turn_uses_the_kept_key_without_reading_the_keychain_and_a_key_set_through_ward_is_read_at_the_next_turn', async () => {
    const h = await warmHarness([answer('One.'), answer('Two.'), answer('Three.'), answer('Four.')]);
    const store = openSecretStore(h.home, h.ns);
    try {
      await h.app.settings.setKey(h.ns, FIRST_KEY);
      const first = await turn(h, 'first');
      expect(first.outcome.state).toBe('succeeded');
      expect(lastKey(h)).toBe(FIRST_KEY);

      // Written to the keychain behind Ward's back (not through Ward, so no stamp): the warm turn
      // does not go to the keychain, so it still sends the key it read.
      await setModelCredential(store, 'api-key', BEHIND_WARDS_BACK);
      const second = await turn(h, 'second', first.handle.conversationId);
      expect(second.outcome.state).toBe('succeeded');
      expect(second.pid).toBe(first.pid);
      expect(lastKey(h)).toBe(FIRST_KEY);

      // Stored through Ward: the next turn reads it, in the same warm CLI.
      await h.app.settings.setKey(h.ns, SET_THROUGH_WARD);
      const third = await turn(h, 'third', first.handle.conversationId);
      expect(third.outcome.state).toBe('succeeded');
      expect(third.pid).toBe(first.pid);
      expect(lastKey(h)).toBe(SET_THROUGH_WARD);

      // Deleted through Ward: the next turn falls back to the environment's key, as a first read would.
      expect(await h.app.settings.clearKey(h.ns)).toBe(true);
      const fourth = await turn(h, 'fourth', first.handle.conversationId);
      expect(fourth.outcome.state).toBe('succeeded');
      expect(lastKey(h)).toBe(CANARY_KEY);
      expect(processGroupAlive(first.pid!)).toBe(true);

      // Every key Ward read is redacted from the journal (C3), the kept one as well.
      const journal = JSON.stringify(h.events(first.handle.conversationId));
      for (const key of [FIRST_KEY, SET_THROUGH_WARD, CANARY_KEY]) expect(journal).not.toContain(key);
    } finally {
      await deleteModelCredential(store);
    }
  });
});
