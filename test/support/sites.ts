import http from 'node:http';
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

/** A loopback web server that says who it is (the hosts sandboxed processes try to reach), closed after the test. */
export async function site(name: string): Promise<Site> {
  let hits = 0;
  const server = http.createServer((_req, res) => {
    hits += 1;
    res.end(`hello from ${name}\n`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.push(server);
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}/`, hostPort: `127.0.0.1:${port}`, hits: () => hits };
}
