// Requests that never reach the router: Node's HTTP parser refuses them (bad request
// line, duplicate or conflicting Content-Length, broken chunked encoding, headers too
// large, a request that took too long). Node's default answer is a bare status line
// with no body; clients of this API branch on the error envelope, so they get one.
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { randomId } from '../../api/ids.js';

type Refusal = [status: number, reason: string, code: string, message: string];

const STATUS: Record<string, Refusal> = {
  HPE_HEADER_OVERFLOW: [431, 'Request Header Fields Too Large', 'request_header_too_large', 'The request headers are too large.'],
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'Request Timeout', 'request_timeout', 'The request was not received in time.'],
  ERR_HTTP_HEADERS_TIMEOUT: [408, 'Request Timeout', 'request_timeout', 'The request headers were not received in time.'],
};
const MALFORMED: Refusal = [
  400,
  'Bad Request',
  'malformed_request',
  'The HTTP request could not be parsed (check the request line, Content-Length and Transfer-Encoding).',
];

/** How long a request already handed to the router may take to answer once the parser failed. */
const PENDING_MS = 30_000;

/** Answers the parser's refusals with a JSON envelope, then closes the connection. */
export function answerClientErrors(server: Server): void {
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
    if (err.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const pending = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;
    if (pending) {
      // A request was already handed to the router (its headers parsed; say after an
      // `Expect: 100-continue`), and the parser failed in its body or in a request
      // pipelined behind it. Its body will never arrive in full: end it where it stops,
      // so the router answers (a 400 for a cut body), then close the connection.
      if (pending.headersSent) {
        pending.once('finish', () => socket.destroySoon?.());
      } else {
        const req = (pending as ServerResponse & { req?: IncomingMessage }).req;
        if (req && !req.complete && !req.readableEnded && !req.destroyed) {
          // Marked complete, or finishing to read it would destroy the socket with it.
          req.complete = true;
          req.push(null);
        }
        const close = () => (socket.destroyed ? undefined : socket.end());
        pending.once('finish', close);
        pending.once('close', close);
      }
      setTimeout(() => socket.destroy(), PENDING_MS).unref();
      return;
    }
    const [status, reason, code, message] = STATUS[err.code ?? ''] ?? MALFORMED;
    const body = JSON.stringify({ error: { message, type: 'invalid_request_error', param: null, code } });
    socket.end(
      `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `X-Request-Id: ${randomId('req_')}\r\nConnection: close\r\n\r\n${body}`,
    );
  });
}
