import { describe, expect, it } from 'vitest';
import { DataFolder } from '../../main/store/data-folder.js';
import { namespaceDir, parseNamespace, resolveNamespace } from '../../main/namespaces/namespace.js';
import { tempDir } from '../support/temp.js';

describe('namespaces (N1)', () => {
  it.each(['', 'Work', 'a'.repeat(33), 'with space', 'dots.not.allowed', '../etc', 'naïve', 'x\u202ey'])('refuses %j and states the rule', (name) => {
    expect(() => parseNamespace(name)).toThrow(/use lowercase letters, digits and "-", 1 to 32 characters/);
  });

  it('accepts the full range of valid names and names their folders by hash only', () => {
    const names = ['a', 'work', 'team-42', 'a'.repeat(32)];
    const folders = names.map((name) => namespaceDir('/data', parseNamespace(name)));
    for (const folder of folders) expect(folder).toMatch(/^\/data\/namespaces\/[0-9a-f]{64}$/);
    expect(new Set(folders).size).toBe(names.length);
  });

  it('fails closed when two host sources disagree', () => {
    expect(() => resolveNamespace({ flag: 'work', env: 'personal' })).toThrow(expect.objectContaining({ code: 'namespace_conflict' }));
    expect(resolveNamespace({ flag: 'work', env: 'work' }).name).toBe('work');
    expect(resolveNamespace({}).name).toBe('default');
  });

  it('keeps each namespace in its own database and lists them by name', () => {
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

  it('does not bring a mistyped namespace into being', () => {
    const core = new DataFolder(tempDir());
    expect(() => core.store(parseNamespace('wrok'), { mustExist: true })).toThrow(/no namespace wrok; create it/);
    core.close();
  });
});
