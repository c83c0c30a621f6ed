/**
 * A real redis-server for the queue tests (no mocks): started on a free loopback port with no
 * persistence, stopped by its pid. HAS_REDIS is false when the binary is missing; the tests then
 * skip with a message.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { createConnection, createServer } from 'node:net';

export const HAS_REDIS = spawnSync('redis-server', ['--version'], { encoding: 'utf8' }).status === 0;
if (!HAS_REDIS) console.warn('[egogeo tests] redis-server is not installed: the queue tests (egogeo run --queue, egogeo worker) are skipped (apt-get install redis-server).');

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const c = createConnection({ host: '127.0.0.1', port });
    let data = '';
    c.once('error', () => resolve(false));
    c.on('data', (d) => {
      data += String(d);
      if (data.includes('\r\n')) {
        c.destroy();
        resolve(data.startsWith('+PONG'));
      }
    });
    c.once('connect', () => c.write('PING\r\n'));
  });
}

export interface RedisServer {
  port: number;
  url: string;
  stop(): Promise<void>;
  /** SIGKILL: Redis gone without a word, as a crashed server. */
  kill(): Promise<void>;
}

/** A new, empty redis-server; on `port` when given (a restart of one that was stopped). */
export async function startRedis(port?: number): Promise<RedisServer> {
  port ??= await freePort();
  const child: ChildProcess = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--daemonize', 'no'], { stdio: 'ignore' });
  const deadline = Date.now() + 10_000;
  while (!(await ping(port))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`redis-server on port ${port} did not start`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
    kill: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGKILL');
      }),
  };
}

/** Sends one command (RESP) and returns the raw reply (for DBSIZE and the like). */
export function redisCommand(port: number, ...args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const c = createConnection({ host: '127.0.0.1', port });
    let data = '';
    c.once('error', reject);
    c.on('data', (d) => {
      data += String(d);
      if (data.endsWith('\r\n')) {
        c.destroy();
        resolve(data);
      }
    });
    c.once('connect', () => c.write(`*${args.length}\r\n${args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join('')}`));
  });
}
