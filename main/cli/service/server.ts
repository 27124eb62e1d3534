/**
 * The `ward` background service (issue 29; the ssh-agent pattern): one long-lived process per user
 * and data folder that runs `ward run`s for the terminals that ask, in one app whose run loop,
 * gateway, sandbox proxies and stores stay open, and whose conversations' CLIs stay warm between
 * turns. A client's turn is journaled by this process, as an in-process turn is by its own; its
 * questions go to the client's terminal; the client going away stops its turn as a closed
 * terminal would (SIGHUP). A service killed with `kill -9` leaves its runs `uncertain` (R8).
 *
 * It exits after `serviceIdleMinutes` without a client, when its socket is removed (the login
 * session's runtime folder goes at logout), on `ward service stop`, and on TERM, INT or HUP,
 * stopping its turns first.
 */
import fs from 'node:fs';
import net from 'node:net';
import { serviceApp } from '../../app/terminal-app.js';
import { serviceIdleMs } from '../../app/run-limits.js';
import type { WardApp } from '../../app/ward-app.js';
import { resolveWardHome } from '../../base/home.js';
import { EXIT, WardError } from '../../base/errors.js';
import { runInContext } from '../run-command.js';
import { backgroundServiceRefusal } from '../../app/policy-view.js';
import { buildIdentity, environmentDigest, markOffByPolicy, privateFolder, servicePlace, tokenMatches, writeToken, type ServicePlace } from './place.js';
import { remoteIo } from './remote-io.js';
import { LineChannel, type ClientMessage, type ServerMessage } from './wire.js';

type Channel = LineChannel<ClientMessage, ServerMessage>;

/** How long a client has to say who it is. */
const HELLO_MS = 5_000;
/** How often the service checks that its socket is still the one it made. */
const SOCKET_WATCH_MS = 5_000;

interface Running {
  readonly app: WardApp;
  readonly place: ServicePlace;
  readonly token: Buffer;
  readonly build: string;
  readonly envDigest: string;
  readonly startedAt: number;
  clients: number;
  turns: number;
  shutdown(why: string): void;
}

/** Whether something answers on the socket (another service won the race to start). */
function answers(socket: string): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = net.createConnection(socket);
    probe.once('connect', () => {
      probe.destroy();
      resolve(true);
    });
    probe.once('error', () => resolve(false));
  });
}

/** Runs the service until it exits; its exit code. */
export async function serve(env: NodeJS.ProcessEnv): Promise<number> {
  const home = resolveWardHome(env);
  const place = servicePlace(env, home);
  // Windows would need a named pipe with an owner-only ACL; macOS has no XDG_RUNTIME_DIR: no service there yet.
  if (place === null) throw new WardError('usage', 'the background service needs a login session runtime folder (XDG_RUNTIME_DIR) to put its socket in');
  privateFolder(place, true);
  if (await answers(place.socket)) return EXIT.ok;
  const { server, token, inode } = await listen(place);
  const app = serviceApp(env);
  let finished: (code: number) => void = () => undefined;
  const exited = new Promise<number>((resolve) => (finished = resolve));
  let idleTimer: NodeJS.Timeout | undefined;
  let closing = false;
  const running: Running = {
    app,
    place,
    token,
    build: buildIdentity(),
    envDigest: environmentDigest(env),
    startedAt: Date.now(),
    clients: 0,
    turns: 0,
    shutdown: (why) => {
      if (closing) return;
      closing = true;
      clearInterval(watch);
      clearTimeout(idleTimer);
      server.close();
      void app
        .close()
        .catch(() => undefined)
        .then(() => {
          // Only what is still ours: a service started after this one keeps its own.
          if (statInode(place.socket) === inode) {
            fs.rmSync(place.socket, { force: true });
            fs.rmSync(place.tokenFile, { force: true });
          }
          process.stderr.write(`ward service: exiting: ${why}\n`);
          finished(EXIT.ok);
          // Nothing of a closed app may keep a service alive that no one can reach any more.
          setImmediate(() => process.exit(EXIT.ok));
        });
    },
  };
  const idleAgain = () => {
    clearTimeout(idleTimer);
    if (running.clients > 0 || closing) return;
    let idleMs: number;
    try {
      idleMs = serviceIdleMs(home);
    } catch {
      idleMs = 0; // settings.json became malformed: the next `ward run` reports it
    }
    idleTimer = setTimeout(() => running.shutdown(`no client for ${Math.round(idleMs / 60_000)} min`), idleMs);
  };
  const watch = setInterval(() => {
    if (statInode(place.socket) !== inode) running.shutdown('its socket was removed (the login session ended?)');
  }, SOCKET_WATCH_MS);
  watch.unref();
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.once(signal, () => running.shutdown(`${signal} received`));
  server.on('connection', (socket) => {
    running.clients += 1;
    clearTimeout(idleTimer);
    socket.once('close', () => {
      running.clients -= 1;
      idleAgain();
    });
    serveClient(running, new LineChannel<ClientMessage, ServerMessage>(socket));
  });
  idleAgain();
  // The run loop (gateway, sandbox probe, run code) is up before the first client needs it.
  void app.runs().catch(() => undefined);
  return exited;
}

/** A new token, then the socket (0600, in the 0700 folder); the socket's inode tells it from one a later service makes. */
async function listen(place: ServicePlace): Promise<{ server: net.Server; token: Buffer; inode: number }> {
  fs.rmSync(place.socket, { force: true });
  const token = writeToken(place);
  const server = net.createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(place.socket, () => resolve());
  });
  fs.chmodSync(place.socket, 0o600);
  return { server, token, inode: fs.statSync(place.socket).ino };
}

function statInode(file: string): number | undefined {
  try {
    return fs.statSync(file).ino;
  } catch {
    return undefined;
  }
}

/** A client: its hello (token, build, environment), then one request. */
function serveClient(running: Running, channel: Channel): void {
  const socket = channel.socket;
  socket.on('error', () => socket.destroy());
  const helloTimer = setTimeout(() => socket.destroy(), HELLO_MS);
  let greeted = false;
  let requested = false;
  channel.onMessage((message) => {
    if (!greeted) {
      clearTimeout(helloTimer);
      if (message.t !== 'hello' || !tokenMatches(running.token, message.token)) return void socket.destroy();
      greeted = true;
      if (message.build !== running.build) {
        channel.finish({ t: 'refused', why: 'the background service is from another build of Ward; it exits now and the next turn starts a new one' });
        if (running.turns === 0) running.shutdown('a client of another build of Ward');
        return;
      }
      if (message.env !== running.envDigest) return channel.finish({ t: 'refused', why: 'the background service was started with a different environment' });
      const refusal = backgroundServiceRefusal(running.app.env);
      if (refusal !== null) {
        markOffByPolicy(running.place, refusal);
        channel.finish({ t: 'refused', why: refusal });
        return running.shutdown(refusal);
      }
      return channel.send({ t: 'welcome' });
    }
    // One request a connection; what follows a run (stdin, signals, answers) is the run's.
    if (requested || !['status', 'stop', 'run'].includes(message.t)) return;
    requested = true;
    if (message.t === 'status') return channel.finish({ t: 'status', pid: process.pid, startedAt: running.startedAt, turns: running.turns, clients: running.clients });
    if (message.t === 'stop') {
      channel.finish({ t: 'exit', code: EXIT.ok });
      return running.shutdown('ward service stop');
    }
    if (message.t === 'run' && validRun(message)) return void runFor(running, channel, message).catch(() => channel.finish({ t: 'exit', code: EXIT.failed }));
    socket.destroy();
  });
}

function validRun(message: Extract<ClientMessage, { t: 'run' }>): boolean {
  return Array.isArray(message.args) && message.args.every((arg) => typeof arg === 'string') && typeof message.cwd === 'string' && message.tty !== null && typeof message.tty === 'object';
}

/** Runs the client's `ward run` in the service's app and sends its exit code. */
async function runFor(running: Running, channel: Channel, request: Extract<ClientMessage, { t: 'run' }>): Promise<void> {
  running.turns += 1;
  try {
    const { runCommand } = await import('../commands/run.js');
    const io = remoteIo(channel, request, running.app.env);
    const code = await runInContext(runCommand, request.args, { io, app: () => running.app });
    channel.finish({ t: 'exit', code });
  } finally {
    running.turns -= 1;
  }
}
