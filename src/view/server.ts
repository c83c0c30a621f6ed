/**
 * `egogeo view`'s local web server (Node's http module): the page (src/view/page.ts, everything
 * inline, works offline), the clip list and a clip's detail as JSON, the frames as images (image
 * files as they are; video frames, decoded by the engine, encoded as JPEG with sharp), and files
 * of the dataset folder under /files/ — nothing outside it (403), checked on the opened file
 * (io/confined.ts), so no folder swapped for a symlink meanwhile leads out. Binds to 127.0.0.1 by default.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import { isIP, type AddressInfo } from 'node:net';
import { hostname } from 'node:os';
import { dirname, extname, isAbsolute, resolve } from 'node:path';
import { type Allowed, ConfinedError, type ConfinedHooks, openConfined, realRoots } from '../io/confined.js';
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

type Sharp = (input: Buffer, opts: { raw: { width: number; height: number; channels: 1 | 3 } }) => { jpeg(o: { quality: number }): { toBuffer(): Promise<Buffer> } };

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

/** PNM frames larger than this are streamed as they are (an 8K RGB frame is 100 MB). */
const MAX_PNM_BYTES = 64 << 20;

function send(res: ServerResponse, status: number, body: string | Buffer, type = 'text/plain; charset=utf-8'): void {
  res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' });
  res.end(body);
}

const json = (res: ServerResponse, status: number, v: unknown) => send(res, status, JSON.stringify(v), 'application/json; charset=utf-8');

/** What a frame file holds, from its first bytes: only images are served as frames. */
function imageType(head: Buffer): string | null {
  if (head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff) return 'image/jpeg';
  if (head.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return 'image/png';
  if (head[0] === 0x50 && (head[1] === 0x35 || head[1] === 0x36) && /\s/.test(String.fromCharCode(head[2]))) return 'image/x-portable-anymap';
  return null;
}

/**
 * A binary PNM frame (P5 grey, P6 RGB, 8 bits: what `egogeo synth` writes) as its header and pixels,
 * null when it is not one. Browsers show no PNM, so the viewer serves such frames as JPEG.
 */
export function parsePnm(b: Buffer): { width: number; height: number; channels: 1 | 3; pixels: Buffer } | null {
  const m = /^P([56])\s+(?:#[^\n]*\n\s*)*(\d+)\s+(?:#[^\n]*\n\s*)*(\d+)\s+(?:#[^\n]*\n\s*)*(\d+)\s/.exec(b.subarray(0, 256).toString('latin1'));
  if (!m) return null;
  const channels = m[1] === '5' ? 1 : 3;
  const width = Number(m[2]), height = Number(m[3]);
  if (Number(m[4]) !== 255 || width < 1 || height < 1) return null;
  const start = m[0].length, size = width * height * channels;
  if (b.length < start + size) return null;
  return { width, height, channels, pixels: b.subarray(start, start + size) };
}

/**
 * Streams a regular file inside `roots`, opened first and then verified on its descriptor
 * (io/confined.ts: no window between the check and the open), without blocking (a FIFO or device
 * never stalls the server); any file error (ENOENT, EACCES, EISDIR, outside, …) is one error
 * response and one log line, never a crash. `frame`: the file must be an image by its content.
 */
async function sendFile(res: ServerResponse, path: string, roots: Allowed, log: (l: string) => void, o: { frame?: boolean; hooks?: ConfinedHooks } = {}): Promise<void> {
  let fh;
  try {
    fh = await openConfined(path, roots, o.hooks);
  } catch (e) {
    const code = e instanceof ConfinedError ? e.code : 'error';
    if (code === 'outside') {
      log(`refused ${path}: outside the dataset folder`);
      return send(res, 403, 'forbidden: outside the dataset folder');
    }
    log(`${path}: cannot open (${code})`);
    return send(res, code === 'ENOENT' ? 404 : 403, `${code === 'ENOENT' ? 'not found' : 'forbidden'}: ${path} cannot be opened (${code})`);
  }
  try {
    const st = await fh.stat();
    if (!st.isFile()) {
      log(`${path}: not a regular file`);
      return send(res, 403, `forbidden: ${path} is not a regular file`);
    }
    let type = TYPES[extname(path).toLowerCase()] ?? 'application/octet-stream';
    if (o.frame) {
      const head = Buffer.alloc(8);
      await fh.read(head, 0, 8, 0);
      const t = imageType(head);
      if (!t) {
        log(`${path}: not an image, not served as a frame`);
        return send(res, 415, `${path} is not a JPEG, PNG or PNM image`);
      }
      type = t;
      const sharp = t === 'image/x-portable-anymap' && st.size <= MAX_PNM_BYTES ? loadSharp() : null;
      if (sharp) {
        const buf = Buffer.alloc(st.size);
        await fh.read(buf, 0, st.size, 0);
        const pnm = parsePnm(buf);
        if (!pnm) {
          log(`${path}: not an 8-bit binary PNM, not served as a frame`);
          return send(res, 415, `${path} is not an 8-bit binary PNM image (P5/P6, maxval 255)`);
        }
        const jpg = await sharp(pnm.pixels, { raw: { width: pnm.width, height: pnm.height, channels: pnm.channels } }).jpeg({ quality: 90 }).toBuffer();
        return send(res, 200, jpg, 'image/jpeg');
      }
    }
    res.writeHead(200, { 'content-type': type, 'content-length': st.size, 'cache-control': 'max-age=3600' });
    const stream = fh.createReadStream({ start: 0 });
    fh = undefined; // the stream owns and closes it
    stream.on('error', (e) => {
      log(`${path}: ${(e as NodeJS.ErrnoException).code ?? e.message}`);
      res.destroy();
    });
    stream.pipe(res);
  } catch (e) {
    log(`${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
    if (!res.headersSent) send(res, 500, `cannot read ${path}`);
    else res.destroy();
  } finally {
    await fh?.close();
  }
}

/**
 * Host headers this server answers (DNS rebinding: a page on another site must not reach it by a
 * name that resolves here): IP literals, localhost, this machine's name, and the bound host.
 */
function hostAllowed(header: string | undefined, bound: string): boolean {
  if (!header) return false;
  const name = header.startsWith('[') ? header.slice(1, header.indexOf(']')) : header.replace(/:\d+$/, '');
  const n = name.toLowerCase();
  return isIP(n) !== 0 || n === 'localhost' || n.endsWith('.localhost') || n === hostname().toLowerCase() || n === bound.toLowerCase();
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
    summary: data.scores(),
    clips: list,
  });
  // What the server may open, fixed at start (a folder swapped for a symlink later is refused): under
  // /files/ the dataset folder; as frames, the files of the folders the dataset's frames lie in
  // (KITTI windows name frames beside the dataset folder).
  const root = resolve(data.root);
  const roots = realRoots([data.root]);
  const frameDirs = new Set(realRoots([...new Set(data.clips.flatMap((c) => (c.frames ?? []).filter((f): f is string => typeof f === 'string').map((f) => dirname(f))))]));
  const frameAllowed = (real: string) => frameDirs.has(dirname(real));
  const sharp = loadSharp();

  const host = o.host ?? '127.0.0.1';
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return send(res, 405, 'method not allowed');
    if (!hostAllowed(req.headers.host, host)) {
      log(`refused a request for Host ${JSON.stringify(req.headers.host ?? '')}`);
      return send(res, 421, 'unknown Host header (open the viewer by its address)');
    }
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
        if (f === null) return send(res, 404, `clip ${c.id} has ${data.frameIndices(c).length} frames`);
        return sendFile(res, f, frameAllowed, log, { frame: true, hooks: o.hooks });
      }
      let eng;
      try {
        eng = await data.runEngine(c);
      } catch (e) {
        return send(res, 422, (e as Error).message.split('\n')[0]);
      }
      const fr = eng.native?.frames?.[i];
      if (!eng.native || !fr) return send(res, 404, eng.native ? `clip ${c.id} has ${eng.frames} frames` : `clip ${c.id}: method ${data.settings.method} keeps no decoded video frames`);
      if (!sharp) return send(res, 501, 'sharp is not installed: video frames cannot be encoded');
      const jpg = await sharp(fr, { raw: { width: eng.native.width, height: eng.native.height, channels: 1 } }).jpeg({ quality: 80 }).toBuffer();
      return send(res, 200, jpg, 'image/jpeg');
    }
    if (parts[0] === 'files') {
      // Files of the dataset folder only: whatever the opened file really is (.., absolute paths,
      // symlinks leading out, a folder swapped for one meanwhile) must lie inside it.
      const rel = parts.slice(1).join('/');
      if (isAbsolute(rel) || rel.split(/[\\/]/).includes('..')) {
        log(`refused ${raw}: outside the dataset folder`);
        return send(res, 403, 'forbidden: outside the dataset folder');
      }
      return sendFile(res, resolve(root, rel), roots, log, { hooks: o.hooks });
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
