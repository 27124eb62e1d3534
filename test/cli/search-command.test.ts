/** `ward search` takes what a person types and prints each passage on one line. */
import { describe, expect, it } from 'vitest';
import { journalEvent } from '../../common/events.js';
import { seedConversation } from '../support/seed.js';
import { tempDir } from '../support/temp.js';
import { ward } from '../support/ward-cli.js';

describe('ward search', () => {
  it('test_searches_dotted_and_hyphenated_text_and_japanese_as_typed_and_prints_the_passage_as_one_line', async () => {
    const home = tempDir();
    const { core, store, conversation } = seedConversation(home);
    store.journal.append(conversation.id, journalEvent('assistant_text', { text: 'First line.\nThen call os.path.join\n\nand restart the api-server.' }));
    store.journal.append(conversation.id, journalEvent('user_prompt', { text: '日本語のテキストを検索' }));
    core.close();
    const env = { WARD_HOME: home };

    const dotted = await ward(['search', 'os.path.join'], { env });
    expect(dotted.code, dotted.stderr).toBe(0);
    expect(dotted.stdout.split('\n')[1]).toBe('    First line. Then call [os].[path].[join] and restart the api-server.');
    expect((await ward(['search', 'api-server'], { env })).stdout).toContain('[api]-[server]');
    // Six pairs of characters before the match, as six words before one elsewhere.
    expect((await ward(['search', '検索'], { env })).stdout).toContain('    …のテキストを[検索]\n');
    const nothing = await ward(['search', '>'], { env });
    expect(nothing.code).toBe(2);
    expect(nothing.stderr).toBe('ward search: the search query ">" has no word to look for: a word is letters or digits\n');
  });
});
