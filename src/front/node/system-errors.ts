// Node's system errors (errno codes) in words, for messages a user reads: "permission
// denied (EACCES)" rather than "EACCES: permission denied, mkdir '/x'" with a stack.

const WORDS: Record<string, string> = {
  ENOENT: 'no such file or folder',
  ENOTDIR: 'a part of the path is a file, not a folder',
  EISDIR: 'it is a folder, not a file',
  EEXIST: 'it already exists',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EROFS: 'read-only file system',
  ENOSPC: 'no space left on the device',
  EMFILE: 'too many open files',
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  ETIMEDOUT: 'timed out',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ENOTFOUND: 'host name not found',
  EAI_AGAIN: 'host name lookup failed',
  EADDRINUSE: 'address in use',
  EADDRNOTAVAIL: 'address not available on this machine',
};

/** The error's code, when it is a Node system error (or wraps one as its cause). */
export function errnoOf(err: unknown): string | undefined {
  for (let e = err as { code?: unknown; cause?: unknown } | undefined, depth = 0; e && depth < 4; e = e.cause as typeof e, depth++) {
    if (typeof e.code === 'string' && /^E[A-Z_]+$/.test(e.code)) return e.code;
  }
  return undefined;
}

/** "permission denied (EACCES)"; the error's own message when it has no known code. */
export function explainErrno(err: unknown): string {
  const code = errnoOf(err);
  if (code && WORDS[code]) return `${WORDS[code]} (${code})`;
  return code ?? (err as Error)?.message ?? String(err);
}

/** "cannot open /x: permission denied (EACCES)" for a file system error that names its
 * path (fs calls do); undefined for any other error. */
export function describeFsError(err: unknown): string | undefined {
  const e = err as NodeJS.ErrnoException;
  if (!e || typeof e.path !== 'string' || !e.syscall || !errnoOf(e)) return undefined;
  return `cannot ${e.syscall} ${e.path}: ${explainErrno(e)}`;
}
