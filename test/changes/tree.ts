/** A whole tree as one hash (paths, kinds, modes, contents, link targets), for byte-exact rewind checks. */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

export function treeHash(root: string): string {
  const hash = createHash('sha256');
  const walk = (dir: string, relative: string) => {
    for (const name of fs.readdirSync(dir).sort()) {
      const absolute = path.join(dir, name);
      const rel = relative === '' ? name : `${relative}/${name}`;
      const stat = fs.lstatSync(absolute);
      if (stat.isDirectory()) {
        hash.update(`d ${rel}\n`);
        walk(absolute, rel);
      } else if (stat.isSymbolicLink()) hash.update(`l ${rel} ${fs.readlinkSync(absolute)}\n`);
      else hash.update(`f ${rel} ${(stat.mode & 0o7777).toString(8)} `).update(fs.readFileSync(absolute)).update('\n');
    }
  };
  walk(root, '');
  return hash.digest('hex');
}

/** Every file under `dir` whose bytes hold `needle`. */
export function filesHolding(dir: string, needle: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return (fs.readdirSync(dir, { recursive: true }) as string[])
    .map((name) => path.join(dir, name))
    .filter((file) => fs.lstatSync(file).isFile() && fs.readFileSync(file).includes(needle));
}
