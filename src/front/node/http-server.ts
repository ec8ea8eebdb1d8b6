// The HTTP listener in front of the router, built so that every request gets a status line
// with the JSON error envelope and an x-request-id, including the ones the router never
// sees: Node answers an HTTP/1.1 request without Host with a bare 400 and drops CONNECT
// without a word, and an Expect other than 100-continue with a bare 417; @hono/node-server
// answers a path with a backslash, or a Host that is not one, with an empty 400; Node's
// parser refusals are answered in client-errors.ts.
import { getRequestListener } from '@hono/node-server';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { randomId, requestIdFrom } from '../../api/ids.js';
import { answerClientErrors } from './client-errors.js';

type Fetch = (req: Request) => Response | Promise<Response>;

const envelope = (message: string, code: string) => JSON.stringify({ error: { message, type: 'invalid_request_error', param: null, code } });

export function createHttpServer(fetch: Fetch, hostname: string): Server {
  const listener = getRequestListener(fetch, {
    // With no Host, the listening address stands in (Node's own check is off below).
    hostname,
    // Only requests that cannot become a Request come here (the router answers everything else).
    errorHandler: (err) => {
      const why = err instanceof Error ? err.message : String(err);
      return new Response(envelope(`The request could not be read: ${why}. Check the path (no backslashes) and the Host header.`, 'malformed_request'), {
        status: 400,
        headers: { 'content-type': 'application/json', 'x-request-id': randomId('req_') },
      });
    },
  });
  const server = createServer({ requireHostHeader: false }, listener);
  answerClientErrors(server);
  server.on('connect', refuseConnect);
  server.on('checkExpectation', refuseExpectation);
  return server;
}

/** Node hands over a request whose Expect is not `100-continue` here instead of to the router. */
function refuseExpectation(req: IncomingMessage, res: ServerResponse): void {
  const body = envelope(
    `The Expect header ${JSON.stringify(req.headers.expect ?? '')} cannot be met; this server knows only "100-continue". Send the request without it.`,
    'expectation_failed',
  );
  res.writeHead(417, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(body),
    'x-request-id': requestIdFrom([req.headers['x-request-id']].flat()[0]),
    'access-control-allow-origin': '*',
    'access-control-expose-headers': 'x-request-id',
  });
  res.end(body);
}

/** CONNECT asks for a tunnel, which this server never opens: 405, as for any method a route lacks. */
function refuseConnect(req: IncomingMessage, socket: Duplex): void {
  const body = envelope(`Method CONNECT is not allowed on ${req.url ?? '/'}; this server opens no tunnels.`, 'method_not_allowed');
  socket.on('error', () => socket.destroy());
  socket.end(
    `HTTP/1.1 405 Method Not Allowed\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
      `X-Request-Id: ${randomId('req_')}\r\nAllow: GET, POST, DELETE, OPTIONS\r\nConnection: close\r\n\r\n${body}`,
  );
}
