import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { isWithin, resolveReal } from '../../main/permissions/paths.js';
import { tempDir } from '../support/temp.js';

function tree(): { root: string; inside: string; outside: string } {
  const root = fs.realpathSync(tempDir());
  const inside = path.join(root, 'project');
  const outside = path.join(root, 'elsewhere');
  fs.mkdirSync(path.join(inside, 'src'), { recursive: true });
  fs.mkdirSync(outside);
  fs.writeFileSync(path.join(outside, 'secret.txt'), 'canary');
  return { root, inside, outside };
}

describe('path resolution', () => {
  it('test_symlink_to_a_directory_outside_resolves_to_its_target', () => {
    const { inside, outside } = tree();
    fs.symlinkSync(outside, path.join(inside, 'src', 'link'));
    expect(resolveReal(path.join(inside, 'src', 'link', 'secret.txt'))).toBe(path.join(outside, 'secret.txt'));
  });

  it('test_dotdot_after_a_symlink_climbs_from_the_target_not_the_link', () => {
    const { inside, outside } = tree();
    fs.mkdirSync(path.join(outside, 'deep'));
    fs.symlinkSync(path.join(outside, 'deep'), path.join(inside, 'src', 'hop'));
    expect(resolveReal(`${inside}/src/hop/../secret.txt`)).toBe(path.join(outside, 'secret.txt'));
  });

  it('test_dangling_symlink_resolves_to_where_a_write_would_land', () => {
    const { inside, outside } = tree();
    fs.symlinkSync(path.join(outside, 'new.txt'), path.join(inside, 'src', 'dangling'));
    expect(resolveReal(path.join(inside, 'src', 'dangling'))).toBe(path.join(outside, 'new.txt'));
  });

  it('test_missing_tail_is_kept_below_the_real_prefix', () => {
    const { inside } = tree();
    expect(resolveReal(path.join(inside, 'src', 'not', 'yet', 'file.ts'))).toBe(path.join(inside, 'src', 'not', 'yet', 'file.ts'));
  });

  it('test_symlink_loop_is_an_error', () => {
    const { inside } = tree();
    fs.symlinkSync(path.join(inside, 'b'), path.join(inside, 'a'));
    fs.symlinkSync(path.join(inside, 'a'), path.join(inside, 'b'));
    expect(() => resolveReal(path.join(inside, 'a', 'x'))).toThrow(/symbolic links|ELOOP/);
  });

  it('test_is_within_needs_a_segment_boundary', () => {
    expect(isWithin('/a/src', '/a/src')).toBe(true);
    expect(isWithin('/a/src', '/a/src/x')).toBe(true);
    expect(isWithin('/a/src', '/a/srcx')).toBe(false);
    expect(isWithin('/', '/anything')).toBe(true);
  });
});
