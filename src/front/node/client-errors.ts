// Requests that never reach the router: Node's HTTP parser refuses them (bad request
// line, duplicate or conflicting Content-Length, broken chunked encoding, headers too
// large, a request that took too long). Node's default answer is a bare status line
// with no body; clients of this API branch on the error envelope, so they get one.
import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import { randomId } from '../../api/ids.js';

const STATUS: Record<string, [number, string, string, string]> = {
  HPE_HEADER_OVERFLOW: [431, 'Request Header Fields Too Large', 'request_header_too_large', 'The request headers are too large.'],
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'Request Timeout', 'request_timeout', 'The request was not received in time.'],
  ERR_HTTP_HEADERS_TIMEOUT: [408, 'Request Timeout', 'request_timeout', 'The request headers were not received in time.'],
};
const MALFORMED: [number, string, string, string] = [
  400,
  'Bad Request',
  'malformed_request',
  'The HTTP request could not be parsed (check the request line, Content-Length and Transfer-Encoding).',
];

/** Answers the parser's refusals with a JSON envelope, then closes the connection. */
export function answerClientErrors(server: Server): void {
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
    // A response already under way on this socket, or a peer already gone: just close
    // (the same test as Node's own handler).
    if (err.code === 'ECONNRESET' || !socket.writable || socket.bytesWritten > 0) {
      socket.destroy();
      return;
    }
    const [status, reason, code, message] = STATUS[err.code ?? ''] ?? MALFORMED;
    const body = JSON.stringify({ error: { message, type: 'invalid_request_error', param: null, code } });
    socket.end(
      `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `X-Request-Id: ${randomId('req_')}\r\nConnection: close\r\n\r\n${body}`,
    );
    socket.destroySoon?.();
  });
}
