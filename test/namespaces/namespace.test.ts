import { describe, expect, it } from 'vitest';
import { DataFolder } from '../../main/store/data-folder.js';
import { namespaceDir, parseNamespace, resolveNamespace } from '../../main/namespaces/namespace.js';
import { tempDir } from '../support/temp.js';

describe('namespaces (N1)', () => {
  it.each(['', 'Work', 'a'.repeat(33), 'with space', 'dots.not.allowed', '../etc', 'naïve', 'x\u202ey'])('test_refuses_%j_and_states_the_rule', (name) => {
    expect(() => parseNamespace(name)).toThrow(/use lowercase letters, digits and "-", 1 to 32 characters/);
  });

  it('test_accepts_the_full_range_of_valid_names_and_names_their_folders_by_hash_only', () => {
    const names = ['a', 'work', 'team-42', 'a'.repeat(32)];
    const folders = names.map((name) => namespaceDir('/data', parseNamespace(name)));
    for (const folder of folders) expect(folder).toMatch(/^\/data\/namespaces\/[0-9a-f]{64}$/);
    expect(new Set(folders).size).toBe(names.length);
  });

  it('test_fails_closed_when_two_host_sources_disagree', () => {
    expect(() => resolveNamespace({ flag: 'work', env: 'personal' })).toThrow(expect.objectContaining({ code: 'namespace_conflict' }));
    expect(resolveNamespace({ flag: 'work', env: 'work' }).name).toBe('work');
    expect(resolveNamespace({}).name).toBe('default');
  });

  it('test_keeps_each_namespace_in_its_own_database_and_lists_them_by_name', () => {
    const home = tempDir();
    const core = new DataFolder(home);
    core.createNamespace('work');
    core.createNamespace('personal');
    expect(() => core.createNamespace('work')).toThrow(/already exists/);
    const listed = core.listNamespaces();
    expect(listed.map((ns) => ns.name)).toEqual(['personal', 'work']);
    expect(new Set(listed.map((ns) => ns.file)).size).toBe(2);
    core.close();
  });

  it('test_does_not_bring_a_mistyped_namespace_into_being', () => {
    const core = new DataFolder(tempDir());
    expect(() => core.store(parseNamespace('wrok'), { mustExist: true })).toThrow(/no namespace wrok; create it/);
    core.close();
  });
});
