/**
 * S6: the runtime's built-in write denies, found for any folder a run may write (not only for
 * Ward's working directory): start-up files and settings at its top whether or not they exist,
 * each repository's hooks and config, nested ones by the runtime's ripgrep scan; never a `.git`
 * of its own, and nothing for a grant of one file.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { builtInDenies } from '../../main/sandbox/built-in-denies.js';
import { tempDir } from '../support/temp.js';

describe('the built-in denies of a run’s folders (S6)', () => {
  it('test_a_folders_start_up_files_missing_or_not_its_repositorys_hooks_and_nested_ones_are_denied_and_the_missing_ones_named_stand_ins', async () => {
    const plain = fs.realpathSync(tempDir('ward-denies-plain-'));
    const repo = fs.realpathSync(tempDir('ward-denies-repo-'));
    fs.mkdirSync(path.join(repo, '.git', 'hooks'), { recursive: true });
    fs.writeFileSync(path.join(repo, '.git', 'HEAD'), 'ref: refs/heads/main\n');
    fs.writeFileSync(path.join(repo, '.bashrc'), 'mine\n');
    fs.mkdirSync(path.join(repo, 'a', '.git'), { recursive: true });
    fs.writeFileSync(path.join(repo, 'a', '.git', 'HEAD'), 'ref: refs/heads/main\n');
    fs.mkdirSync(path.join(repo, 'a', '.vscode'));
    fs.writeFileSync(path.join(repo, 'a', '.vscode', 'settings.json'), '{}\n');
    const oneFile = path.join(plain, 'notes.txt');
    fs.writeFileSync(oneFile, 'a grant may name one file\n');

    const denies = await builtInDenies([plain, repo, oneFile, path.join(plain, 'missing')]);
    for (const root of [plain, repo]) {
      for (const name of ['.bashrc', '.profile', '.zshrc', '.gitconfig', '.mcp.json', '.vscode', '.idea', '.claude/commands', '.claude/agents']) {
        expect(denies.paths, `${root}/${name}`).toContain(path.join(root, name));
      }
    }
    expect(denies.paths).toEqual(expect.arrayContaining([`${repo}/.git/hooks`, `${repo}/.git/config`, `${repo}/a/.git/hooks`, `${repo}/a/.vscode`]));
    // A plain folder gets no `.git` (it would look like a repository); a grant of one file, nothing.
    expect(denies.paths.filter((denied) => denied === `${plain}/.git` || denied.startsWith(`${plain}/.git/`) || denied.startsWith(`${oneFile}/`) || denied === oneFile)).toEqual([]);
    // What is missing is what the runtime stands an empty file or folder in for while the run lasts.
    expect(denies.standIns).toContain(`${plain}/.bashrc`);
    // The runtime's mount point for a missing path is its first missing folder.
    expect(denies.standIns).toContain(`${plain}/.claude`);
    expect(denies.standIns).not.toContain(`${plain}/.claude/commands`);
    expect(denies.standIns).toContain(`${repo}/a/.git/hooks`);
    expect(denies.standIns).not.toContain(`${repo}/.bashrc`);
    expect(denies.standIns).not.toContain(`${repo}/.git/hooks`);
    expect(denies.standIns.every((denied) => !fs.existsSync(denied))).toBe(true);
  });
});
