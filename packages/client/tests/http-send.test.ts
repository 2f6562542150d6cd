import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpError, send } from '../src/kit/http/request.ts';
import { type Received, type RecordingServer, startRecordingServer } from './helpers/recording-server.ts';

// The client's node:http transport against a real server on 127.0.0.1: what arrives on the wire
// for each body kind, and how redirects, stalls and bad addresses end.

let server: RecordingServer;
let base: string;
let work: string;
/** The last request the server received. */
const last = (): Received | undefined => server.seen.at(-1);

beforeAll(async () => {
  server = await startRecordingServer();
  base = server.base;
  work = await fs.mkdtemp(path.join(os.tmpdir(), 'http-send-'));
});
afterAll(async () => {
  await server.close();
  await fs.rm(work, { recursive: true, force: true });
});

async function failure(p: Promise<unknown>): Promise<HttpError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(HttpError);
  return err as HttpError;
}

describe('send: bodies as they arrive', () => {
  it('a JSON body is sent with its length and content type, and the answer comes back whole', async () => {
    server.handle((_req, _body, res) => {
      res.writeHead(201, { 'content-type': 'application/json', 'x-extra': 'yes' });
      res.end('{"ok":true}');
    });
    const text = JSON.stringify({ name: 'café' });
    const res = await send(
      { method: 'POST', url: `${base}/j?x=1`, headers: { 'x-api-key': 'k' }, body: { kind: 'json', text } },
      5000,
    );
    expect(res.status).toBe(201);
    expect(res.headers['x-extra']).toBe('yes');
    expect(res.body.toString()).toBe('{"ok":true}');
    expect(last()).toMatchObject({ method: 'POST', url: '/j?x=1' });
    expect(last()?.headers).toMatchObject({
      'x-api-key': 'k',
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(text)),
    });
    expect(last()?.body.toString()).toBe(text);
  });

  it('a file body is streamed as it is, with its own content type', async () => {
    const file = path.join(work, 'report.html');
    const content = Buffer.from(`<p>${'x'.repeat(200_000)}</p>`);
    await fs.writeFile(file, content);
    server.handle((_req, _body, res) => res.end());
    const res = await send(
      { method: 'PUT', url: `${base}/f`, headers: {}, body: { kind: 'file', file, contentType: 'text/html' } },
      5000,
    );
    expect(res.status).toBe(200);
    expect(last()?.headers['content-type']).toBe('text/html');
    expect(last()?.headers['content-length']).toBe(String(content.length));
    expect(last()?.body.equals(content)).toBe(true);
  });

  it('a multipart body is form-data a standard parser reads: names, file names, types and bytes', async () => {
    const a = path.join(work, 'session_results.json');
    const b = path.join(work, 'odd "name".log');
    await fs.writeFile(a, '{"session_id":"20261125_101010"}');
    await fs.writeFile(b, Buffer.from([0, 1, 2, 255, 13, 10]));
    await send(
      {
        method: 'POST',
        url: `${base}/api/upload`,
        headers: { 'x-api-key': 'k' },
        body: {
          kind: 'multipart',
          parts: [
            { name: 'results', file: a, contentType: 'application/json' },
            { name: 'log', file: b, contentType: 'text/plain' },
          ],
        },
      },
      5000,
    );
    const type = last()?.headers['content-type'] ?? '';
    expect(type).toMatch(/^multipart\/form-data; boundary=----svc[0-9a-f]{32}$/);
    expect(last()?.headers['content-length']).toBe(String(last()?.body.length));
    const form = await new Response(new Uint8Array(last()?.body ?? []), {
      headers: { 'content-type': type },
    }).formData();
    const results = form.get('results') as File;
    expect([results.name, results.type, await results.text()]).toEqual([
      'session_results.json',
      'application/json',
      '{"session_id":"20261125_101010"}',
    ]);
    const log = form.get('log') as File;
    // Sent as odd %22name%22.log (RFC 7578's encoding of a quote), read back as the file's name.
    expect([log.name, log.type]).toEqual(['odd "name".log', 'text/plain']);
    expect(last()?.body.toString('latin1')).toContain('filename="odd %22name%22.log"');
    expect([...new Uint8Array(await log.arrayBuffer())]).toEqual([0, 1, 2, 255, 13, 10]);
  });

  it('a part that cannot be read is a file error and nothing is sent', async () => {
    server.seen.length = 0;
    const missing = path.join(work, 'missing.json');
    const err = await failure(
      send(
        {
          method: 'POST',
          url: `${base}/api/upload`,
          headers: {},
          body: { kind: 'multipart', parts: [{ name: 'results', file: missing, contentType: 'application/json' }] },
        },
        5000,
      ),
    );
    expect([err.kind, err.message]).toEqual(['file', `Cannot read ${missing}: ENOENT`]);
    const dir = await failure(
      send(
        { method: 'PUT', url: `${base}/f`, headers: {}, body: { kind: 'file', file: work, contentType: 'text/html' } },
        5000,
      ),
    );
    expect([dir.kind, dir.message]).toEqual(['file', `Cannot read ${work}: EISDIR`]);
    expect(server.seen).toEqual([]);
  });
});

describe('send: how a request ends', () => {
  it('a redirect is answered as it is, not followed', async () => {
    server.handle((_req, _body, res) => {
      res.writeHead(302, { location: `${base}/elsewhere` });
      res.end();
    });
    const res = await send({ method: 'GET', url: `${base}/api/license`, headers: {} }, 5000);
    expect([res.status, res.headers.location]).toEqual([302, `${base}/elsewhere`]);
    expect(last()?.url).toBe('/api/license');
  });

  it('an answer that stalls after its headers is a timeout', async () => {
    server.handle((_req, _body, res) => {
      server.hold(res);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"partial":');
    });
    const err = await failure(send({ method: 'GET', url: `${base}/slow`, headers: {} }, 300));
    expect([err.kind, err.message]).toEqual(['timeout', `No answer from ${base} within 0.3 s`]);
  });

  it('an invalid URL or another protocol is a network error naming it', async () => {
    const bad = await failure(send({ method: 'GET', url: 'not a url', headers: {} }, 1000));
    expect([bad.kind, bad.message]).toEqual(['network', 'Cannot reach not a url: invalid URL']);
    const ftp = await failure(send({ method: 'GET', url: 'ftp://127.0.0.1/x', headers: {} }, 1000));
    expect([ftp.kind, ftp.message]).toEqual(['network', 'Cannot reach ftp://127.0.0.1: unsupported protocol ftp:']);
  });

  it('a header value with a line break is refused before anything is sent', async () => {
    server.seen.length = 0;
    const err = await failure(
      send({ method: 'GET', url: `${base}/h`, headers: { 'x-api-key': 'a\r\nx-evil: 1' } }, 1000),
    );
    expect([err.kind, err.message]).toEqual(['network', `Cannot reach ${base}: ERR_INVALID_CHAR`]);
    expect(server.seen).toEqual([]);
  });
});
