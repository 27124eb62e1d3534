/**
 * A TCP relay between an audit sender and its receiver that can hold one connection's ending.
 * Syslog's only acknowledgement is the receiver closing after the sender's end of stream, so a
 * connection whose receiver → sender bytes are held after the sender ended is a batch the receiver
 * read in full while the sender still waits to count it: "mid-batch", however fast the sender runs.
 * TLS passes through untouched (the sender verifies the receiver's certificate end to end).
 */
import net from 'node:net';
import { freePort } from './rsyslog.js';

export class CloseHoldingRelay {
  private readonly sockets = new Set<net.Socket>();
  private accepted = 0;
  private server: net.Server | undefined;
  private markEnded!: () => void;
  /** Resolves once the held connection's sender has ended its stream (the receiver has everything). */
  readonly senderEndedHeldConnection = new Promise<void>((resolve) => (this.markEnded = resolve));

  /** `holdConnection`: the 1-based number of the connection whose ending never reaches the sender. */
  constructor(
    private readonly target: number,
    private readonly holdConnection: number,
  ) {}

  async start(): Promise<number> {
    const port = await freePort();
    // Half-open both ways: a sender's end must not end the relay's side towards it by itself.
    this.server = net.createServer({ allowHalfOpen: true }, (client) => this.relay(client));
    await new Promise<void>((resolve) => this.server!.listen(port, '127.0.0.1', resolve));
    return port;
  }

  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise((resolve) => (this.server === undefined ? resolve(undefined) : this.server.close(resolve)));
  }

  private relay(client: net.Socket): void {
    const held = ++this.accepted === this.holdConnection;
    const receiver = net.connect({ host: '127.0.0.1', port: this.target, allowHalfOpen: true });
    for (const socket of [client, receiver]) {
      this.sockets.add(socket);
      socket.on('error', () => undefined);
      socket.on('close', () => this.sockets.delete(socket));
    }
    client.pipe(receiver);
    if (!held) {
      receiver.pipe(client);
      return;
    }
    // Until the sender ends, the receiver's bytes flow (the TLS handshake); after, none does, nor its end.
    let senderEnded = false;
    client.on('end', () => {
      senderEnded = true;
      this.markEnded();
    });
    receiver.on('data', (chunk: Buffer) => {
      if (!senderEnded) client.write(chunk);
    });
  }
}
