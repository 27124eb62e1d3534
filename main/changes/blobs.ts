/**
 * The content-addressed blob store of a namespace's file changes (issue 26): each blob is a file
 * named by the SHA-256 of its bytes, so a content seen twice is stored once. Blobs are written to
 * a temporary name and renamed, so a blob that exists is whole (a `kill -9` mid-write leaves only
 * a temporary file, removed by the next `sweepTemporary`).
 */
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

export function sha256(bytes: Buffer | string): string {
  return createHash('sha256').update(bytes).digest('hex');
}

const BLOB_HASH = /^[0-9a-f]{64}$/;

export class BlobStore {
  /** Fan-out folders known to exist (a first snapshot stores thousands of blobs). */
  private readonly fans = new Set<string>();

  constructor(readonly dir: string) {}

  pathOf(hash: string): string {
    if (!BLOB_HASH.test(hash)) throw new Error(`not a blob hash: ${hash.slice(0, 80)}`);
    return path.join(this.dir, hash.slice(0, 2), hash.slice(2));
  }

  /** False for a string that is not a SHA-256 at all: a journal may name anything, the store holds only hashes. */
  has(hash: string): boolean {
    return BLOB_HASH.test(hash) && fs.existsSync(this.pathOf(hash));
  }

  /** Stores `bytes` under `hash` (their SHA-256, computed by the caller) unless already there. */
  put(hash: string, bytes: Buffer): void {
    const target = this.pathOf(hash);
    if (fs.existsSync(target)) return;
    const fan = path.dirname(target);
    if (!this.fans.has(fan)) {
      fs.mkdirSync(fan, { recursive: true, mode: 0o700 });
      this.fans.add(fan);
    }
    const temporary = `${target}.tmp-${randomBytes(6).toString('hex')}`;
    fs.writeFileSync(temporary, bytes, { mode: 0o600 });
    fs.renameSync(temporary, target);
  }

  read(hash: string): Buffer {
    return fs.readFileSync(this.pathOf(hash));
  }

  /** Bytes and files the store holds (for `ward doctor`). */
  size(): { readonly blobs: number; readonly bytes: number } {
    let blobs = 0;
    let bytes = 0;
    if (!fs.existsSync(this.dir)) return { blobs, bytes };
    for (const fan of fs.readdirSync(this.dir)) {
      for (const name of fs.readdirSync(path.join(this.dir, fan))) {
        blobs += 1;
        bytes += fs.lstatSync(path.join(this.dir, fan, name)).size;
      }
    }
    return { blobs, bytes };
  }
}
