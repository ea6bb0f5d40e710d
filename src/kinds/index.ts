/**
 * The kinds of record, by format: what the store looks a record's kind up in.
 *
 * Owns: the registry of joined kinds (record-kind.ts) and their steps. Must not: do I/O.
 */
import type { AnyStep, JoinedKind } from './record-kind.js';
import { REGISTER } from './register/register-kind.js';

export { DecodeError, Reader, asBuffer, varintSize, writeVarint } from './record-bytes.js';
export { COUNTER_FORMAT, REGISTER_FORMAT, VERSIONS_FORMATS, isKnownFormat, kindName, recordKind } from './formats.js';
export type { AnyStep, DecodedState, JoinedKind, KindStep, StepCodec, StepLimits } from './record-kind.js';
export { REGISTER } from './register/register-kind.js';
export * from './register/acceptor.js';
export * from './register/register-record.js';
export { checkBallot, checkProposal } from './register/proposal-checks.js';
export { PAXOS_COMMIT, PAXOS_PREPARE, PAXOS_PROPOSE } from './register/register-steps.js';

const JOINED: ReadonlyMap<number, JoinedKind<unknown>> = new Map(
  [REGISTER as JoinedKind<unknown>].map((k) => [k.format, k]),
);

/** The joined kind whose records `bytes` is one of, or undefined (versions, a counter). */
export const joinedKindOf = (bytes: Uint8Array): JoinedKind<unknown> | undefined => JOINED.get(bytes[0] ?? -1);

/** Every kind's step names, each unique: what a replica call of a step is labelled by (in metrics, in tests' counts). */
export const STEP_NAMES: readonly string[] = [...JOINED.values()].flatMap((k) => Object.keys(k.steps));
if (new Set(STEP_NAMES).size !== STEP_NAMES.length)
  throw new Error(`two kinds name a step alike (${STEP_NAMES.join(', ')}): a step's name labels its calls`);

/** Step `name` of the joined kind of format `format`, or undefined when this release knows no such kind or step. */
export function kindStep(
  format: number,
  name: string,
): { kind: JoinedKind<unknown>; step: AnyStep<unknown> } | undefined {
  const kind = JOINED.get(format);
  const step = kind !== undefined && Object.hasOwn(kind.steps, name) ? kind.steps[name] : undefined;
  return step === undefined ? undefined : { kind: kind!, step };
}
