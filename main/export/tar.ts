/**
 * A small, strict tar (POSIX ustar) for export bundles. Why not a zip library: a bundle is four
 * flat files, and an uncompressed tar is read in place (a file's bytes are at a known offset), so
 * checking a bundle never unpacks, decompresses or writes anything, and a bound on the file is
 * a bound on everything read. The reader accepts regular files with plain names only: a link, a
 * folder, a path, an extension header, a duplicate or a truncated archive is an error naming it.
 */
import fs from 'node:fs';
import { WardError } from '../base/errors.js';

const BLOCK = 512;
const ZERO_BLOCK = Buffer.alloc(BLOCK);
/** The largest size an 11-digit octal size field holds. */
const MAX_ENTRY_BYTES = 8 * 1024 ** 3 - 1;

function octal(value: number, width: number): string {
  return `${value.toString(8).padStart(width - 1, '0')}\0`;
}

function header(name: string, size: number, mtimeSeconds: number): Buffer {
  const block = Buffer.alloc(BLOCK);
  block.write(name, 0, 100, 'utf8');
  block.write(octal(0o644, 8), 100, 'ascii');
  block.write(octal(0, 8), 108, 'ascii');
  block.write(octal(0, 8), 116, 'ascii');
  block.write(octal(size, 12), 124, 'ascii');
  block.write(octal(mtimeSeconds, 12), 136, 'ascii');
  block.write('0', 156, 'ascii');
  block.write('ustar\u000000', 257, 'ascii');
  block.write(`${checksum(block).toString(8).padStart(6, '0')}\0 `, 148, 'ascii');
  return block;
}

/** The header's checksum: the sum of its bytes with the checksum field counted as spaces. */
function checksum(block: Buffer): number {
  let sum = 0;
  for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 0x20 : block[i]!;
  return sum;
}

/**
 * Writes a tar to an open file descriptor. An entry whose size is known only at its end (a
 * streamed journal) gets its header written again once it is complete.
 */
export class TarWriter {
  private position = 0;

  constructor(
    private readonly fd: number,
    private readonly mtime: Date,
  ) {}

  private write(data: Buffer): void {
    let done = 0;
    while (done < data.length) done += fs.writeSync(this.fd, data, done, data.length - done, this.position + done);
    this.position += data.length;
  }

  private checkName(name: string): void {
    if (!/^[A-Za-z0-9._-]{1,100}$/.test(name)) throw new WardError('internal', `tar entry name ${JSON.stringify(name)} is not a plain file name`);
  }

  addFile(name: string, data: Buffer): void {
    this.checkName(name);
    this.write(header(name, data.length, this.seconds()));
    this.write(data);
    this.pad(data.length);
  }

  /** Starts an entry written in chunks; `end()` fixes its header and returns its size. */
  beginFile(name: string): { write(chunk: Buffer): void; end(): number } {
    this.checkName(name);
    const at = this.position;
    this.write(header(name, 0, this.seconds()));
    let size = 0;
    return {
      write: (chunk) => {
        size += chunk.length;
        if (size > MAX_ENTRY_BYTES) throw new WardError('usage', `${name} would exceed ${MAX_ENTRY_BYTES} bytes`);
        this.write(chunk);
      },
      end: () => {
        this.pad(size);
        fs.writeSync(this.fd, header(name, size, this.seconds()), 0, BLOCK, at);
        return size;
      },
    };
  }

  /** Two zero blocks end the archive. */
  finish(): void {
    this.write(ZERO_BLOCK);
    this.write(ZERO_BLOCK);
  }

  private pad(size: number): void {
    const rest = size % BLOCK;
    if (rest !== 0) this.write(ZERO_BLOCK.subarray(0, BLOCK - rest));
  }

  private seconds(): number {
    return Math.floor(this.mtime.getTime() / 1000);
  }
}

export interface TarEntry {
  readonly name: string;
  /** Where the entry's bytes start in the archive. */
  readonly offset: number;
  readonly size: number;
}

/** Which names may appear, each with its size bound; `required` ones must. */
export interface TarLayout {
  readonly files: Readonly<Record<string, { readonly maxBytes: number; readonly required: boolean }>>;
}

const TYPE_NAMES: Readonly<Record<string, string>> = {
  '1': 'a hard link',
  '2': 'a symbolic link',
  '3': 'a character device',
  '4': 'a block device',
  '5': 'a folder',
  '6': 'a FIFO',
  '7': 'a contiguous file',
  g: 'a global extended header',
  x: 'an extended header',
  L: 'a GNU long name',
  K: 'a GNU long link name',
};

function field(block: Buffer, start: number, length: number): string {
  const raw = block.subarray(start, start + length);
  const end = raw.indexOf(0);
  return raw.subarray(0, end === -1 ? length : end).toString('utf8');
}

function parseOctal(block: Buffer, start: number, length: number): number | null {
  const text = field(block, start, length).trim();
  return /^[0-7]{1,12}$/.test(text) ? parseInt(text, 8) : null;
}

function bad(what: string, why: string): WardError {
  return new WardError('bundle_invalid', `${what} is not a valid bundle: ${why}`);
}

function readBlock(fd: number, position: number): Buffer {
  const block = Buffer.alloc(BLOCK);
  const read = fs.readSync(fd, block, 0, BLOCK, position);
  return read === BLOCK ? block : block.subarray(0, read);
}

/**
 * Lists a tar's entries without reading their contents, refusing anything but the layout's
 * regular files. `what` names the archive in errors.
 */
export function readTarIndex(fd: number, archiveSize: number, layout: TarLayout, what: string): Map<string, TarEntry> {
  const entries = new Map<string, TarEntry>();
  let position = 0;
  for (;;) {
    if (position + BLOCK > archiveSize) throw bad(what, `it is truncated (it ends ${archiveSize - position === 0 ? 'without the end-of-archive blocks' : 'inside a header'})`);
    const block = readBlock(fd, position);
    if (block.equals(ZERO_BLOCK)) {
      if (position + 2 * BLOCK > archiveSize || !readBlock(fd, position + BLOCK).equals(ZERO_BLOCK)) throw bad(what, 'it is truncated (the end-of-archive blocks are incomplete)');
      break;
    }
    const magic = block.subarray(257, 263).toString('latin1');
    if (magic !== 'ustar\0' && magic !== 'ustar ') throw bad(what, `the header at byte ${position} is not a tar header (corrupt, or not a tar file)`);
    if (parseOctal(block, 148, 8) !== checksum(block)) throw bad(what, `the header at byte ${position} has a wrong checksum (corrupt)`);
    const prefix = magic === 'ustar\0' ? field(block, 345, 155) : '';
    const name = prefix === '' ? field(block, 0, 100) : `${prefix}/${field(block, 0, 100)}`;
    const shown = JSON.stringify(name.slice(0, 120));
    const type = String.fromCharCode(block[156]!);
    if (type !== '0' && type !== '\0') throw bad(what, `entry ${shown} is ${TYPE_NAMES[type] ?? `of unknown type ${JSON.stringify(type)}`}; a bundle holds regular files only`);
    if (name.includes('..') && /(^|[/\\])\.\.([/\\]|$)/.test(name)) throw bad(what, `entry ${shown} climbs out of its folder (path traversal)`);
    if (name.startsWith('/') || name.includes('/') || name.includes('\\')) throw bad(what, `entry ${shown} has a path; a bundle's files have plain names`);
    const rule = Object.prototype.hasOwnProperty.call(layout.files, name) ? layout.files[name] : undefined;
    if (rule === undefined) throw bad(what, `it holds an unexpected file ${shown} (a bundle holds ${Object.keys(layout.files).join(', ')})`);
    if (entries.has(name)) throw bad(what, `it holds ${shown} twice`);
    const size = parseOctal(block, 124, 12);
    if (size === null) throw bad(what, `entry ${shown} has an unreadable size`);
    if (size > rule.maxBytes) throw bad(what, `${name} is ${size} bytes, more than the ${rule.maxBytes} a bundle may hold`);
    const offset = position + BLOCK;
    if (offset + size > archiveSize) throw bad(what, `it is truncated (${name} should have ${size} bytes, ${Math.max(0, archiveSize - offset)} are there)`);
    entries.set(name, { name, offset, size });
    position = offset + Math.ceil(size / BLOCK) * BLOCK;
  }
  for (const [name, rule] of Object.entries(layout.files)) if (rule.required && !entries.has(name)) throw bad(what, `it has no ${name}`);
  return entries;
}

/** An entry's bytes (for the small ones: statement, key, README). */
export function readEntry(fd: number, entry: TarEntry): Buffer {
  const data = Buffer.alloc(entry.size);
  let done = 0;
  while (done < entry.size) {
    const read = fs.readSync(fd, data, done, entry.size - done, entry.offset + done);
    if (read === 0) throw new WardError('bundle_invalid', `${entry.name} ended early: the bundle changed while it was read`);
    done += read;
  }
  return data;
}
