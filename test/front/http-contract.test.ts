// Every status line a real `hearth serve` sends has a body in the error envelope (or is a 2xx)
// and an x-request-id, whatever the method (CONNECT and TRACE: 405; HEAD: no body, but the
// headers) and however odd the request target or the Host: backslashes, encoded separators,
// no Host, a Host that is not one, an Expect it cannot meet, a request line that is not one.
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixtures } from '../helpers/fixtures.js';
import { rawExchange, type RawAnswer } from '../helpers/raw-http.js';
import { createKey, startServer, type TestServer } from '../helpers/server.js';

let server: TestServer;
let port: number;
let key: string;

beforeAll(async () => {
  await fixtures();
  server = await startServer(['--models', 'svc/tiny-chat']);
  port = Number(new URL(server.url).port);
  key = await createKey(server.dataDir);
}, 120_000);

afterAll(async () => {
  expect(await server?.stop()).toBe(0);
});

/** The one answer to a raw request, held to the contract. */
async function ask(head: string, body = ''): Promise<RawAnswer> {
  const answers = await rawExchange(port, [head + '\r\n' + body]);
  if (answers === 'aborted' || answers.length !== 1) throw new Error(`${JSON.stringify(head)}: expected one answer, got ${JSON.stringify(answers)}`);
  const a = answers[0]!;
  const what = `${JSON.stringify(head.split('\r\n')[0])} → ${a.status} ${a.body.slice(0, 200)}`;
  expect(a.headers['x-request-id'], what).toBeTruthy();
  expect(a.status, what).toBeLessThan(500);
  if (a.status >= 400) {
    expect(a.headers['content-type'], what).toMatch(/application\/json/);
    const e = (JSON.parse(a.body) as { error: Record<string, unknown> }).error;
    expect(typeof e.message === 'string' && e.message.length > 0, what).toBe(true);
    expect(typeof e.type, what).toBe('string');
    expect('param' in e && 'code' in e, what).toBe(true);
  }
  return a;
}

const line = (method: string, target: string, headers: string[] = ['Host: 127.0.0.1']) =>
  `${method} ${target} HTTP/1.1\r\n${[...headers, 'Connection: close'].map((h) => `${h}\r\n`).join('')}`;

/** A HEAD request through node:http, which knows that its answer has no body. */
function head(path: string): Promise<{ status: number; headers: Record<string, string | string[] | undefined> }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method: 'HEAD', headers: { authorization: `Bearer ${key}` } }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers }));
    });
    req.on('error', reject);
    req.end();
  });
}

const POST_ONLY = ['/v1/chat/completions', '/v1/completions', '/v1/responses', '/v1/embeddings', '/generate'];

describe('the HTTP contract', () => {
  it('answers CONNECT with a 405 envelope instead of closing the connection', async () => {
    for (const target of ['example.com:443', '127.0.0.1:80', '/v1/models']) {
      const a = await ask(line('CONNECT', target, [`Host: ${target}`]));
      expect(a.status).toBe(405);
      expect(JSON.parse(a.body).error.code).toBe('method_not_allowed');
    }
  });

  it('answers TRACE with a 405 on every path, known or not', async () => {
    for (const path of ['/', '/health', '/v1/chat/completions', '/nope']) {
      const a = await ask(line('TRACE', path, ['Host: 127.0.0.1', `Authorization: Bearer ${key}`]));
      expect(a.status).toBe(405);
    }
  });

  it('answers odd paths in the envelope: backslashes, encoded separators, dots', async () => {
    const auth = ['Host: 127.0.0.1', `Authorization: Bearer ${key}`];
    expect((await ask(line('GET', '/v1/models/svc\\tiny-chat', auth))).status).toBe(400);
    expect((await ask(line('GET', '/v1\\models', auth))).status).toBe(400);
    expect((await ask(line('GET', '/v1/models/svc%2Ftiny-chat', auth))).status).toBe(200);
    for (const path of ['/v1/models/svc%5Ctiny-chat', '/v1%2Fmodels', '/%2e%2e/health', '/v1/models/%00', '/v1/models/svc%2F..%2F..', '//v1//models', '/v1/models?x=\\']) {
      await ask(line('GET', path, auth));
    }
  });

  it('answers requests without a Host, or with one that is not a host, in the envelope', async () => {
    const a = await ask(line('OPTIONS', '/v1/chat/completions', ['Accept: application/xml']));
    expect(a.status).toBe(204);
    expect((await ask(line('GET', '/health', []))).status).toBe(200);
    for (const host of ['a b', '[::1', 'x:99999', 'exa\tmple.com', '', 'user@host', '../..']) {
      await ask(line('GET', '/v1/models', [`Host: ${host}`, `Authorization: Bearer ${key}`]));
    }
  });

  it('answers every method on every kind of path with an envelope and an x-request-id', async () => {
    for (const method of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE', 'PROPFIND', 'MKCOL', 'LOCK', 'SEARCH', 'PURGE']) {
      for (const path of ['/', '/health', '/v1/models', '/v1/models/svc/tiny-chat', '/v1/chat/completions', '/generate', '/admin/models', '/nope']) {
        const withBody = method !== 'GET' && method !== 'OPTIONS' && method !== 'TRACE';
        await ask(line(method, path, ['Host: 127.0.0.1', `Authorization: Bearer ${key}`, ...(withBody ? ['Content-Type: application/json', 'Content-Length: 2'] : [])]), withBody ? '{}' : '');
      }
    }
  }, 60_000);

  it('answers HEAD on a POST-only route with a 405, the methods it takes in Allow, and an x-request-id', async () => {
    for (const path of [...POST_ONLY, '/admin/models/svc/tiny-chat/redeploy']) {
      const r = await head(path);
      expect(r.status, path).toBe(405);
      expect(r.headers['x-request-id'], path).toMatch(/^req_/);
      expect(r.headers.allow, path).toMatch(/\bPOST\b/);
      expect(r.headers.allow, path).not.toMatch(/\bHEAD\b|\bGET\b/);
    }
  });

  it('answers HEAD on a GET route with its status and an x-request-id', async () => {
    for (const path of ['/health', '/v1/models', '/v1/models/svc/tiny-chat']) {
      const r = await head(path);
      expect(r.status, path).toBe(200);
      expect(r.headers['x-request-id'], path).toMatch(/^req_/);
    }
  });

  it('answers other methods on a POST-only route with a 405 envelope and an Allow header', async () => {
    for (const path of POST_ONLY) {
      for (const method of ['GET', 'PUT', 'PATCH', 'DELETE']) {
        const a = await ask(line(method, path, ['Host: 127.0.0.1', `Authorization: Bearer ${key}`]));
        expect(a.status, `${method} ${path}`).toBe(405);
        expect(JSON.parse(a.body).error).toMatchObject({ type: 'invalid_request_error', code: 'method_not_allowed' });
        expect(a.headers.allow, `${method} ${path}`).toBe('POST, OPTIONS');
      }
    }
  });

  it('answers an Expect it cannot meet with a 417 envelope, and reads the body after 100-continue', async () => {
    // A body the router reads and refuses by its field: proof that it arrived.
    const body = JSON.stringify({ messages: [{ role: 'user', content: 'Hi' }] });
    const headers = ['Host: 127.0.0.1', `Authorization: Bearer ${key}`, 'Content-Type: application/json', `Content-Length: ${body.length}`];
    for (const expectation of ['foo', '200-ok', '102-processing']) {
      const a = await ask(line('POST', '/v1/chat/completions', [...headers, `Expect: ${expectation}`]), body);
      expect(a.status, expectation).toBe(417);
      expect(JSON.parse(a.body).error).toMatchObject({ type: 'invalid_request_error', code: 'expectation_failed' });
      expect(JSON.parse(a.body).error.message).toContain(expectation);
    }
    const read = await ask(line('POST', '/v1/chat/completions', [...headers, 'Expect: 100-continue']), body);
    expect(read.status).toBe(400);
    expect(JSON.parse(read.body).error.param).toBe('model');
  });

  it('answers a request line that is not one with a 400 envelope', async () => {
    for (const head of ['GARBAGE', 'GET /v1/models HTTP/9.9', 'G\u0000T / HTTP/1.1', 'GET / HTTP/1.1\r\nBad Header Line']) {
      const a = await ask(`${head}\r\n`);
      expect(a.status, head).toBe(400);
      expect(JSON.parse(a.body).error.code, head).toBe('malformed_request');
    }
  });
});
