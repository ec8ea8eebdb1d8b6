/** A failure the CLI reports as one line on stderr, exiting with `exitCode`. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}

/** Wrong usage: unknown command or flag, bad value. Exit status 2. */
export class UsageError extends CliError {
  constructor(message: string) {
    super(message, 2);
  }
}

/** Keys and URL passwords out of a line that will be printed (a mistyped flag may carry one). */
export function redactSecrets(text: string): string {
  return text.replace(/svc_live_[0-9A-Za-z]+/g, 'svc_live_…').replace(/(\b[a-z][a-z0-9+.-]*:\/\/)[^\s/@]*@/gi, '$1…@');
}
