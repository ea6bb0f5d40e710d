/**
 * Dots, the vocabulary versions and counters share: an actor (who issued a dot), a write
 * id (which request a write came from), their sizes in a record, and the reader that
 * reads them from one.
 *
 * Owns: the actor and write id types and bytes, and reading them (with a cache of the
 * actors decoded lately). Must not: know a record's layout.
 */
import { DecodeError, Reader } from './record-bytes.js';

/** An actor id: ACTOR_BYTES bytes held as a latin1 string (a cheap, comparable Map key). */
export type Actor = string;
export const ACTOR_BYTES = 16;

/** A write id: WRITE_ID_BYTES bytes held as a latin1 string, as actors are. */
export type WriteId = string;
export const WRITE_ID_BYTES = 8;

/** The reader of a versions or counter record: varints and bytes, and the actors and write ids of dots. */
export class DotReader extends Reader {
  actor(): Actor {
    if (ACTOR_BYTES > this.end - this.pos) throw new DecodeError('truncated');
    this.pos += ACTOR_BYTES;
    return actorAt(this.buf, this.pos - ACTOR_BYTES);
  }
  writeId(): WriteId {
    return this.bytes(WRITE_ID_BYTES).toString('latin1');
  }
}

/**
 * Actors decoded lately, direct-mapped by their bytes. Records and contexts name few
 * actors (this node's and its replicas'): reusing their strings skips a native latin1
 * decode and a string per actor, and the Map lookups that follow find a string whose
 * hash is already computed.
 */
const ACTOR_SLOTS = 64;
const actorWords = new Int32Array(ACTOR_SLOTS * 4);
const actorStrings: Array<Actor | undefined> = new Array<Actor | undefined>(ACTOR_SLOTS).fill(undefined);

function actorAt(buf: Buffer, at: number): Actor {
  const w0 = buf.readInt32LE(at),
    w1 = buf.readInt32LE(at + 4),
    w2 = buf.readInt32LE(at + 8),
    w3 = buf.readInt32LE(at + 12);
  const slot = Math.imul(w0 ^ w1 ^ w2 ^ w3, 0x9e3779b1) >>> 26; // 64 slots
  const cached = actorStrings[slot],
    i = slot * 4;
  if (
    cached !== undefined &&
    actorWords[i] === w0 &&
    actorWords[i + 1] === w1 &&
    actorWords[i + 2] === w2 &&
    actorWords[i + 3] === w3
  )
    return cached;
  const actor = buf.toString('latin1', at, at + ACTOR_BYTES);
  ((actorWords[i] = w0), (actorWords[i + 1] = w1), (actorWords[i + 2] = w2), (actorWords[i + 3] = w3));
  actorStrings[slot] = actor;
  return actor;
}
