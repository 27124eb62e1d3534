/**
 * WAL checkpoints on a worker thread (issue 19). A checkpoint copies the WAL into the database
 * file and fsyncs it: 5–8 ms on these machines, nearly all of it the fsync. On the main thread
 * every line of a live stream arriving meanwhile waited for it (the stream benchmark's p99 tail).
 * The worker keeps its own connection per database file and runs PASSIVE checkpoints, which
 * never block the writer: in WAL mode a checkpointer and a writer take different locks.
 *
 * One worker per process, for every database that asks; it never keeps the process alive. If it
 * cannot start, checkpoints run on the caller's thread as before (the stream's tail comes back;
 * nothing is lost).
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/** How long closing a database may wait for the worker to close its connection to it. */
const CLOSE_WAIT_MS = 2_000;

/** CommonJS, evaluated in the worker: `sqlite` is better-sqlite3's resolved entry point. */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.sqlite);
const connections = new Map();
parentPort.on('message', (message) => {
  if (message.kind === 'checkpoint') {
    try {
      let db = connections.get(message.file);
      if (db === undefined) {
        db = new Database(message.file, { fileMustExist: true });
        connections.set(message.file, db);
      }
      // PASSIVE: copies what it can without waiting for readers or writers.
      db.pragma('wal_checkpoint(PASSIVE)');
    } catch {
      // busy or gone: the next request (or SQLite's own backstop) checkpoints
    }
  } else if (message.kind === 'close') {
    try {
      connections.get(message.file)?.close();
    } catch {
      // closing a connection that failed to open
    }
    connections.delete(message.file);
    Atomics.store(message.done, 0, 1);
    Atomics.notify(message.done, 0);
  }
});
`;

export class Checkpointer {
  private worker: Worker | null | undefined;
  private readonly files = new Set<string>();

  /**
   * Checkpoints `file` off this thread; false when no worker can run here (the caller checkpoints
   * itself).
   */
  request(file: string): boolean {
    const worker = this.start();
    if (worker === null) return false;
    this.files.add(file);
    worker.postMessage({ kind: 'checkpoint', file });
    return true;
  }

  /**
   * The worker lets go of `file` before its owner closes it, so the owner's connection is the
   * last one and SQLite removes the WAL as it always did. Waits (bounded) for the worker.
   */
  release(file: string): void {
    if (!this.files.delete(file) || this.worker == null) return;
    const done = new Int32Array(new SharedArrayBuffer(4));
    this.worker.postMessage({ kind: 'close', file, done });
    Atomics.wait(done, 0, 0, CLOSE_WAIT_MS);
    if (this.files.size === 0) {
      void this.worker.terminate();
      this.worker = undefined;
    }
  }

  private start(): Worker | null {
    if (this.worker !== undefined) return this.worker;
    try {
      const sqlite = createRequire(import.meta.url).resolve('better-sqlite3');
      const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { sqlite } });
      worker.unref();
      // A worker that dies takes its connections along; checkpoints go back to the caller's thread.
      worker.once('error', () => {
        if (this.worker === worker) this.worker = null;
      });
      this.worker = worker;
    } catch {
      this.worker = null;
    }
    return this.worker;
  }
}

/** The process's checkpointer, shared by every open database. */
export const checkpointer = new Checkpointer();
