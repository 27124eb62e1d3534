/**
 * Deno's --allow-env in Ward: what a grant may name and what a stored grant of a secret-looking
 * name needs (which variables a run passes is tested with the run's permissions).
 */
import { describe, expect, it } from 'vitest';
import { GrantStore } from '../../main/permissions/grant-store.js';
import { parsePermissionFlags } from '../../main/permissions/grants.js';
import { wardErrorOf } from '../support/errors.js';
import { seedConversation } from '../support/seed.js';
import { tempDir } from '../support/temp.js';
import { wardInProcess as ward } from '../support/ward-in-process.js';

describe('what an env grant may name', () => {
  it('test_allow_env_refuses_every_name_ward_sets_or_owns_when_the_grant_is_written', () => {
    for (const name of ['ANTHROPIC_API_KEY', 'ANTHROPIC_BASE_URL', 'ANTHROPIC_MODEL', 'CLAUDE_CONFIG_DIR', 'CLAUDE_CODE_OAUTH_TOKEN', 'WARD_HOME', 'WARD_POLICY', 'LD_PRELOAD', 'DYLD_INSERT_LIBRARIES', 'BASH_ENV']) {
      const error = wardErrorOf(() => parsePermissionFlags([`--allow-env=${name}`], '/'));
      expect(error.code).toBe('invalid_grant');
      expect(error.message).toBe(`--allow-env: env entry "${name}": ${name} is Ward's to set or to keep out: ANTHROPIC_*, CLAUDE_*, WARD_*, LD_*, DYLD_* and BASH_ENV never pass from Ward's environment to an agent`);
    }
    // A stored grant is written through the same check, whoever writes it.
    const { store, conversation } = seedConversation(tempDir());
    expect(wardErrorOf(() => new GrantStore(store.db).add({ scope: 'conversation', conversationId: conversation.id, effect: 'allow', kind: 'env', value: 'ANTHROPIC_AUTH_TOKEN', grantedBy: 'x' })).code).toBe('invalid_grant');
    // Names that merely contain the words are ordinary variables.
    expect(parsePermissionFlags(['--allow-env=MY_ANTHROPIC_NOTES,BASH_ENVIRONMENT,ENV'], '/').map((rule) => rule.value)).toEqual(['MY_ANTHROPIC_NOTES', 'BASH_ENVIRONMENT', 'ENV']);
  });

  it('test_a_stored_grant_of_a_secret_looking_name_needs_confirm_secret_env_and_a_plain_name_does_not', async () => {
    const home = tempDir();
    const { core } = seedConversation(home);
    core.close();
    const env = { WARD_HOME: home };
    const refused = await ward(['permissions', 'grant', '--defaults', '--allow-env=GITHUB_TOKEN'], env);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toBe(
      'ward permissions: GITHUB_TOKEN looks like a secret, and a stored grant hands it to the agent at every run without asking: confirm with ward permissions grant … --confirm-secret-env, or grant it for one run with ward run --allow-env=GITHUB_TOKEN (Ward asks when the run starts)\n',
    );
    for (const name of ['AWS_SECRET_ACCESS_KEY', 'DB_PASSWORD', 'OPENAI_API_KEY']) expect((await ward(['permissions', 'grant', '--agent', 'helper', `--allow-env=${name}`], env)).code).toBe(2);
    expect((await ward(['permissions'], env)).stdout).not.toContain('GITHUB_TOKEN');
    const confirmed = await ward(['permissions', 'grant', '--defaults', '--allow-env=GITHUB_TOKEN', '--confirm-secret-env'], env);
    expect(confirmed).toMatchObject({ code: 0, stdout: expect.stringMatching(/allow env {3}GITHUB_TOKEN {2}\(namespace, cli/) });
    // A deny needs no confirmation, nor does a plain name.
    expect((await ward(['permissions', 'grant', '--defaults', '--deny-env=NPM_TOKEN', '--allow-env=EDITOR'], env)).code).toBe(0);
  });
});
