/**
 * A real rsyslog (Debian's rsyslog + rsyslog-gnutls) for the audit sink's tests: its own config,
 * a TLS listener (imtcp, gtls driver) on a loopback port with a certificate from a test CA made by
 * openssl, every message written raw, one per line, to a file. A Direct main queue makes rsyslog
 * write each message before it reads the next, so what it read is on disk when it closes.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';

export const RSYSLOGD = '/usr/sbin/rsyslogd';

export interface TestCa {
  readonly dir: string;
  /** The CA Ward is told to trust. */
  readonly caFile: string;
  /** Issued by the CA, for localhost and 127.0.0.1. */
  readonly certFile: string;
  readonly keyFile: string;
  /** Self-signed by another CA: does not verify against caFile. */
  readonly strangerCertFile: string;
  readonly strangerKeyFile: string;
}

function openssl(dir: string, args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: 'ignore' });
}

export function makeTestCa(dir: string): TestCa {
  openssl(dir, ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2', '-subj', '/CN=Ward Test CA']);
  openssl(dir, ['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=localhost']);
  fs.writeFileSync(path.join(dir, 'ext.cnf'), 'subjectAltName=DNS:localhost,IP:127.0.0.1\n');
  openssl(dir, ['x509', '-req', '-in', 'server.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'server.pem', '-days', '2', '-extfile', 'ext.cnf']);
  openssl(dir, ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'stranger.key', '-out', 'stranger.pem', '-days', '2', '-subj', '/CN=localhost', '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1']);
  const at = (name: string) => path.join(dir, name);
  return { dir, caFile: at('ca.pem'), certFile: at('server.pem'), keyFile: at('server.key'), strangerCertFile: at('stranger.pem'), strangerKeyFile: at('stranger.key') };
}

export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export class Rsyslog {
  private child: ChildProcess | undefined;
  readonly output: string;

  constructor(
    private readonly dir: string,
    readonly port: number,
    private readonly ca: TestCa,
  ) {
    this.output = path.join(dir, 'received.log');
  }

  /** The running rsyslogd's process id. */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** Starts rsyslogd with a certificate (default: the one issued by the test CA) and waits until it listens. */
  async start(cert: { certFile: string; keyFile: string } = this.ca): Promise<void> {
    const work = fs.mkdtempSync(path.join(this.dir, 'work-'));
    const config = path.join(work, 'rsyslog.conf');
    fs.writeFileSync(
      config,
      [
        `global(workDirectory="${work}" maxMessageSize="64k" defaultNetstreamDriver="gtls" defaultNetstreamDriverCAFile="${this.ca.caFile}" defaultNetstreamDriverCertFile="${cert.certFile}" defaultNetstreamDriverKeyFile="${cert.keyFile}")`,
        'main_queue(queue.type="Direct")',
        'module(load="imtcp" StreamDriver.Name="gtls" StreamDriver.Mode="1" StreamDriver.AuthMode="anon")',
        `input(type="imtcp" port="${this.port}" address="127.0.0.1")`,
        'template(name="raw" type="string" string="%rawmsg%\\n")',
        `action(type="omfile" file="${this.output}" template="raw")`,
        '',
      ].join('\n'),
    );
    this.child = spawn(RSYSLOGD, ['-n', '-f', config, '-i', path.join(work, 'rsyslogd.pid')], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    this.child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const deadline = Date.now() + 15_000;
    while (!(await this.listening())) {
      if (this.child.exitCode !== null || Date.now() > deadline) throw new Error(`rsyslogd did not start listening on ${this.port}: ${stderr}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  private listening(): Promise<boolean> {
    return new Promise((resolve) => {
      const socket = net.connect({ host: '127.0.0.1', port: this.port }, () => {
        socket.destroy();
        resolve(true);
      });
      socket.on('error', () => resolve(false));
    });
  }

  /** Stops rsyslogd (SIGKILL: killed mid-batch) and waits for it to be gone. */
  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    const child = this.child;
    this.child = undefined;
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill(signal);
    await exited;
  }

  /** Every line received so far (a line cut short by a kill is kept as it is). */
  lines(): string[] {
    if (!fs.existsSync(this.output)) return [];
    return fs.readFileSync(this.output, 'utf8').split('\n').filter((line) => line !== '');
  }

  /** The `id` (event hash) of each received line, in order, duplicates included. */
  ids(): string[] {
    return this.lines().flatMap((line) => /\[ward@32473 id="([0-9a-f]{64})"/.exec(line)?.[1] ?? []);
  }
}
