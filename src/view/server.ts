/**
 * `egogeo view`'s local web server (Node's http module): the page (src/view/page.ts, everything
 * inline, works offline), the clip list and a clip's detail as JSON, the frames as images (image
 * files as they are; video frames, decoded by the engine, encoded as JPEG with sharp), and files
 * of the dataset folder under /files/ — nothing outside it (403). Binds to 127.0.0.1 by default.
 */
import { createReadStream, existsSync, realpathSync, statSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { extname, isAbsolute, relative, resolve, sep } from 'node:path';
import { PAGE } from './page.js';
import { ViewData, type ViewOptions } from './data.js';

export interface ViewServerOptions extends ViewOptions {
  port?: number;
  host?: string;
}

export interface ViewServer {
  url: string;
  data: ViewData;
  server: Server;
  close(): Promise<void>;
}

type Sharp = (input: Buffer, opts: { raw: { width: number; height: number; channels: 1 } }) => { jpeg(o: { quality: number }): { toBuffer(): Promise<Buffer> } };

function loadSharp(): Sharp | null {
  try {
    return createRequire(import.meta.url)('sharp') as Sharp;
  } catch {
    return null;
  }
}

const TYPES: Record<string, string> = {
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.png': 'image/png',
  '.json': 'application/json',
  '.jsonl': 'application/x-ndjson',
  '.mp4': 'video/mp4',
  '.txt': 'text/plain; charset=utf-8',
  '.npz': 'application/octet-stream',
};

function send(res: ServerResponse, status: number, body: string | Buffer, type = 'text/plain; charset=utf-8'): void {
  res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' });
  res.end(body);
}

const json = (res: ServerResponse, status: number, v: unknown) => send(res, status, JSON.stringify(v), 'application/json; charset=utf-8');

function sendFile(res: ServerResponse, path: string): void {
  const st = statSync(path);
  res.writeHead(200, { 'content-type': TYPES[extname(path).toLowerCase()] ?? 'application/octet-stream', 'content-length': st.size, 'cache-control': 'max-age=3600' });
  createReadStream(path).pipe(res);
}

/** Whether `p` lies inside `root` (both real paths). */
function inside(root: string, p: string): boolean {
  const r = relative(root, p);
  return r === '' || (!r.startsWith('..') && !isAbsolute(r) && !r.split(sep).includes('..'));
}

export async function startViewServer(o: ViewServerOptions): Promise<ViewServer> {
  const log = o.log ?? ((l: string) => process.stderr.write(`egogeo view: ${l}\n`));
  const data = new ViewData({ ...o, log });
  const list = data.list();
  const listJson = JSON.stringify({
    dataset: data.root,
    questions: data.questions.questions.map((q) => q.id),
    predictions: data.runs.map((r) => ({ name: r.name, file: r.file, clips: r.byClip.size, trajectories: r.trajectories !== null })),
    warnings: data.warnings,
    near: data.near,
    clips: list,
  });
  const root = realpathSync(data.root);
  const sharp = loadSharp();

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return send(res, 405, 'method not allowed');
    const raw = req.url ?? '/';
    const path = raw.split('?')[0];
    let parts: string[];
    try {
      parts = path.split('/').filter((s) => s !== '').map((s) => decodeURIComponent(s));
    } catch {
      return send(res, 400, 'bad URL');
    }
    if (parts.length === 0) return send(res, 200, PAGE, 'text/html; charset=utf-8');
    if (parts.length === 1 && parts[0] === 'favicon.ico') return send(res, 204, '');
    if (parts[0] === 'api' && parts[1] === 'clips' && parts.length === 2) return send(res, 200, listJson, 'application/json; charset=utf-8');
    if (parts[0] === 'api' && parts[1] === 'clip' && parts.length === 3) {
      const d = await data.clipDetail(parts[2]);
      return d ? json(res, 200, d) : json(res, 404, { error: `no clip '${parts[2]}' in the dataset` });
    }
    if (parts[0] === 'frame' && parts.length === 3) {
      const c = data.byId.get(parts[1]);
      const i = Number(parts[2].replace(/\.jpg$/, ''));
      if (!c) return send(res, 404, `no clip '${parts[1]}'`);
      if (!Number.isInteger(i) || i < 0) return send(res, 400, 'frame index must be a non-negative integer');
      if (c.frames) {
        const f = data.frameFile(c, i);
        if (f === null) return send(res, 404, `clip ${c.id} has ${data.settings.frames ? Math.min(data.settings.frames, c.frames.length) : c.frames.length} frames`);
        if (!existsSync(f)) return send(res, 404, `missing frame ${f}`);
        return sendFile(res, f);
      }
      let eng;
      try {
        eng = await data.runEngine(c);
      } catch (e) {
        return send(res, 422, (e as Error).message.split('\n')[0]);
      }
      const fr = eng.native.frames?.[i];
      if (!fr) return send(res, 404, `clip ${c.id} has ${eng.frames} frames`);
      if (!sharp) return send(res, 501, 'sharp is not installed: video frames cannot be encoded');
      const jpg = await sharp(fr, { raw: { width: eng.native.width, height: eng.native.height, channels: 1 } }).jpeg({ quality: 80 }).toBuffer();
      return send(res, 200, jpg, 'image/jpeg');
    }
    if (parts[0] === 'files') {
      // Files of the dataset folder only: anything that resolves outside it (.., absolute paths,
      // symlinks leading out) is refused.
      const want = resolve(root, parts.slice(1).join('/'));
      let real: string;
      try {
        real = realpathSync(want);
      } catch {
        return inside(root, want) ? send(res, 404, 'not found') : send(res, 403, 'forbidden: outside the dataset folder');
      }
      if (!inside(root, real)) {
        log(`refused ${raw}: outside the dataset folder`);
        return send(res, 403, 'forbidden: outside the dataset folder');
      }
      if (!statSync(real).isFile()) return send(res, 403, 'forbidden: not a file');
      return sendFile(res, real);
    }
    if (parts.includes('..') || path.includes('%2e%2e') || path.includes('%2E%2E')) return send(res, 403, 'forbidden');
    return send(res, 404, 'not found');
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((e) => {
      log(`${req.url}: ${(e as Error).message.split('\n')[0]}`);
      if (!res.headersSent) send(res, 500, (e as Error).message.split('\n')[0]);
      else res.end();
    });
  });
  const host = o.host ?? '127.0.0.1';
  await new Promise<void>((ok, fail) => {
    server.once('error', fail);
    server.listen(o.port ?? 0, host, () => ok());
  });
  const a = server.address() as AddressInfo;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${a.port}/`;
  return {
    url,
    data,
    server,
    close: () => new Promise<void>((ok) => {
      server.closeAllConnections?.();
      server.close(() => ok());
    }),
  };
}
