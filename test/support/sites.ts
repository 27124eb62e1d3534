import http from 'node:http';
import https from 'node:https';
import { afterEach } from 'vitest';

const servers: http.Server[] = [];

afterEach(async () => {
  for (const server of servers.splice(0)) await new Promise((resolve) => server.close(resolve));
});

export interface Site {
  readonly url: string;
  readonly hostPort: string;
  hits(): number;
}

/** A loopback web server that says who it is (the hosts sandboxed processes try to reach), closed after the test; https with `tls`. */
export async function site(name: string, tls?: { readonly key: string; readonly cert: string }): Promise<Site> {
  let hits = 0;
  const handler: http.RequestListener = (_req, res) => {
    hits += 1;
    res.end(`hello from ${name}\n`);
  };
  const server = tls === undefined ? http.createServer(handler) : https.createServer(tls, handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.push(server);
  const { port } = server.address() as { port: number };
  return { url: `${tls === undefined ? 'http' : 'https'}://127.0.0.1:${port}/`, hostPort: `127.0.0.1:${port}`, hits: () => hits };
}
