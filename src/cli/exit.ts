/**
 * The exit codes of `ringkv` and the error that carries one: what every command module
 * needs, apart from failures.ts (the wording of gRPC failures) so that loading them loads
 * no gRPC.
 */

/** Exit codes of `ringkv`, documented in docs/reads-and-writes.md#cli. */
export const EXIT = {
  /** Anything failed: a bad argument, a node that is not there, an error from the node. */
  error: 1,
  /** With --exit-code: the key was not found (get), or there was nothing to delete (del). */
  notFound: 2,
  /** get --out of a key with siblings and no --sibling to choose one: nothing was written. */
  siblings: 3,
  /** getmany/putmany: some keys failed (their lines say why); the others succeeded. */
  someFailed: 4,
  /** cas put/del: not applied (the key's version was not the one given); the current value is printed. */
  notApplied: 5,
  /** cas put/del: the outcome is unknown (a timeout, a node lost mid-call); cas get shows whether it applied. */
  casUnknown: 6,
} as const;

/** A failure whose message is ready for the user, with the exit code to leave with. */
export class CliError extends Error {
  override readonly name = 'CliError';
  constructor(
    message: string,
    readonly exitCode: number = EXIT.error,
  ) {
    super(message);
  }
}
