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
