/**
 * Issue 29: the built-in denies' scan of a folder is kept and reused while the folder's tree is
 * unchanged, by this process and the next; never for a changed tree (a new nested repository, a
 * new start-up file deep down), nor when the tree changed while the scan ran, even back again.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { builtInDenies, linuxUtilities } from '../../main/sandbox/built-in-denies.js';
import { DenyScanCache } from '../../main/sandbox/deny-scan-cache.js';
import { tempDir } from '../support/temp.js';

const VARIANT = { depth: 3, allowGitConfig: false, ripgrep: undefined };
/** A folder changed in the last moment is scanned but not kept. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 100));

/** The runtime's scan, counted. */
async function countedScan(): Promise<{ scan: (folder: string) => Promise<string[]>; count: () => number }> {
  const scan = (await linuxUtilities()).linuxGetMandatoryDenyPaths!;
  let count = 0;
  return {
    scan: (folder) => {
      count++;
      return scan(undefined, VARIANT.depth, VARIANT.allowGitConfig, undefined, folder);
    },
    count: () => count,
  };
}

function repository(folder: string): void {
  fs.mkdirSync(path.join(folder, '.git', 'hooks'), { recursive: true });
  fs.writeFileSync(path.join(folder, '.git', 'HEAD'), 'ref: refs/heads/main\n');
}

const sorted = (paths: readonly string[]) => [...paths].sort();

describe('kept deny scans (issue 29)', () => {
  it('test_an_unchanged_folder_is_not_scanned_again_by_this_process_or_the_next_and_a_changed_one_is', async () => {
    const workspace = fs.realpathSync(tempDir('ward-deny-scans-'));
    const keptFile = path.join(fs.realpathSync(tempDir('ward-deny-scans-data-')), 'sandbox-deny-scans.json');
    repository(path.join(workspace, 'a'));
    fs.mkdirSync(path.join(workspace, 'b', '.vscode'), { recursive: true });
    fs.writeFileSync(path.join(workspace, 'b', '.vscode', 'settings.json'), '{}\n');
    await settle();
    const { scan, count } = await countedScan();
    const cache = new DenyScanCache(keptFile);

    const first = await cache.scan(workspace, VARIANT, scan);
    expect(sorted(first)).toEqual(sorted(await scan(workspace)));
    expect(first).toEqual(expect.arrayContaining([`${workspace}/a/.git/hooks`, `${workspace}/b/.vscode`]));
    const scans = count();
    expect(await cache.scan(workspace, VARIANT, scan)).toEqual(first);
    // The next Ward process reads the kept scan.
    expect(await new DenyScanCache(keptFile).scan(workspace, VARIANT, scan)).toEqual(first);
    // A stand-in the runtime made and removed again leaves the tree as it was.
    fs.writeFileSync(path.join(workspace, '.profile'), '');
    fs.rmSync(path.join(workspace, '.profile'));
    expect(await cache.scan(workspace, VARIANT, scan)).toEqual(first);
    expect(count()).toBe(scans);

    // A nested repository made since, and a start-up file three folders down.
    repository(path.join(workspace, 'sub2'));
    fs.mkdirSync(path.join(workspace, 'deep', 'er'), { recursive: true });
    fs.writeFileSync(path.join(workspace, 'deep', 'er', '.bashrc'), 'mine\n');
    await settle();
    const changed = await cache.scan(workspace, VARIANT, scan);
    expect(count()).toBe(scans + 1);
    expect(changed).toEqual(expect.arrayContaining([`${workspace}/sub2/.git/hooks`, `${workspace}/deep/er/.bashrc`]));
    expect(sorted(changed)).toEqual(sorted(await scan(workspace)));
    // A new file alone, in a folder that was there.
    fs.writeFileSync(path.join(workspace, 'b', '.zshrc'), 'mine\n');
    await settle();
    const rescans = count();
    expect(await cache.scan(workspace, VARIANT, scan)).toContain(`${workspace}/b/.zshrc`);
    expect(count()).toBe(rescans + 1);
    // Through builtInDenies, as a launch asks: the kept scan of the changed tree.
    const counted = count();
    expect((await builtInDenies([workspace], cache)).paths).toEqual(expect.arrayContaining([`${workspace}/sub2/.git/hooks`]));
    expect(count()).toBe(counted);
  });

  it('test_a_scan_during_which_the_tree_changed_even_back_again_is_not_kept', async () => {
    const workspace = fs.realpathSync(tempDir('ward-deny-scans-'));
    await settle();
    const { scan, count } = await countedScan();
    const cache = new DenyScanCache(null);
    // A folder made and removed while ripgrep ran: the names are as before, the tree is not known to be.
    const meanwhile = async (folder: string) => {
      const found = await scan(folder);
      fs.mkdirSync(path.join(folder, 'sub3'));
      fs.rmdirSync(path.join(folder, 'sub3'));
      return found;
    };
    await cache.scan(workspace, VARIANT, meanwhile);
    await settle();
    await cache.scan(workspace, VARIANT, scan);
    expect(count()).toBe(2);
    await cache.scan(workspace, VARIANT, scan);
    expect(count()).toBe(2);
  });

  it('test_an_identical_tree_elsewhere_reuses_the_scan_with_its_own_paths', async () => {
    const [one, two] = [fs.realpathSync(tempDir('ward-deny-scans-one-')), fs.realpathSync(tempDir('ward-deny-scans-two-'))];
    for (const folder of [one!, two!]) repository(path.join(folder, 'nested'));
    await settle();
    const { scan, count } = await countedScan();
    const cache = new DenyScanCache(null);
    await cache.scan(one!, VARIANT, scan);
    const reused = await cache.scan(two!, VARIANT, scan);
    expect(count()).toBe(1);
    expect(sorted(reused)).toEqual(sorted(await scan(two!)));
    expect(reused).toContain(`${two}/nested/.git/hooks`);
  });
});
