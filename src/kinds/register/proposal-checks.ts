/**
 * What a Paxos step's arguments must be before an acceptor takes them: a ballot a
 * positive whole number and a proposer id, a proposal's request id and base short
 * latin1 names (what the register's record can hold), its value bytes or null.
 *
 * Owns: the shape of a ballot and a proposal. Must not: do I/O, or check a value's size
 * (the store's limit).
 */
import { KvError } from '../kv-errors.js';
import type { Ballot, Proposal } from './acceptor.js';

/** A Paxos ballot as given, refused (KV_BAD_OPTION) unless a positive safe integer and a proposer id of 1 to 255 latin1 characters. */
export function checkBallot(b: Ballot | undefined): void {
  if (
    b === undefined ||
    !Number.isSafeInteger(b.n) ||
    b.n < 1 ||
    typeof b.by !== 'string' ||
    b.by.length === 0 ||
    b.by.length > 255 ||
    /[^\x00-\xff]/.test(b.by)
  )
    throw new KvError(
      'KV_BAD_OPTION',
      `a Paxos ballot is a positive whole number and a proposer id of 1 to 255 latin1 characters, got ${JSON.stringify(b)?.slice(0, 80)}`,
    );
}

/** A proposal an acceptor may take (its value's size apart), or KV_BAD_OPTION / KV_BAD_VALUE. */
export function checkProposal(p: Proposal<Buffer>): void {
  checkBallot(p?.ballot);
  if (typeof p.id !== 'string' || p.id.length === 0 || p.id.length > 255 || /[^\x00-\xff]/.test(p.id))
    throw new KvError('KV_BAD_OPTION', 'a Paxos proposal names its request by an id of 1 to 255 latin1 characters');
  if (p.base !== undefined && (typeof p.base !== 'string' || p.base.length > 255 || /[^\x00-\xff]/.test(p.base)))
    throw new KvError(
      'KV_BAD_OPTION',
      "a Paxos proposal's base is the request id of a commit: 0 to 255 latin1 characters",
    );
  if (p.value !== null && !(p.value instanceof Uint8Array))
    throw new KvError('KV_BAD_VALUE', `a proposal's value is bytes or null (absent), got ${typeof p.value}`);
}
