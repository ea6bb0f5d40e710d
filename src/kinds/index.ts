/**
 * The kinds of record, by format: what the store looks a record's kind up in.
 *
 * Owns: the registry of joined kinds (record-kind.ts). Must not: do I/O.
 */
import type { JoinedKind } from './record-kind.js';
import { REGISTER } from './register/register-kind.js';

export { DecodeError, Reader, asBuffer, varintSize, writeVarint } from './record-bytes.js';
export { COUNTER_FORMAT, REGISTER_FORMAT, VERSIONS_FORMATS, isKnownFormat, kindName, recordKind } from './formats.js';
export type { DecodedState, JoinedKind } from './record-kind.js';
export { REGISTER } from './register/register-kind.js';
export * from './register/acceptor.js';
export { checkBallot, checkProposal } from './register/proposal-checks.js';

const JOINED: ReadonlyMap<number, JoinedKind<unknown>> = new Map(
  [REGISTER as JoinedKind<unknown>].map((k) => [k.format, k]),
);

/** The joined kind whose records `bytes` is one of, or undefined (versions, a counter). */
export const joinedKindOf = (bytes: Uint8Array): JoinedKind<unknown> | undefined => JOINED.get(bytes[0] ?? -1);
