/**
 * The gossip messages (SYN, ACK, ACK2, and delta gossip's part of a SYN) and the check
 * every message from the network passes before the gossiper reads it: a bad envelope
 * refuses the message whole, a bad entry is skipped and the rest kept.
 *
 * Owns: the messages' shapes, their limits, the check. Must not: hold state, know the
 * member table, do I/O or read clocks.
 */

import { checkDelta, checkDigest, isAddress, type Delta, type Digest } from './endpoint.js';

/** Who sent a message, and where to answer it. */
export interface Envelope {
  /** Messages from another cluster name are refused. */
  readonly cluster: string;
  readonly from: string;
  /** Where to answer. */
  readonly fromAddr: string;
}
export type GossipMessage =
  | (Envelope & {
      readonly kind: 'syn';
      readonly digests: readonly Digest[];
      /** The sender's own state, whole, when it announces itself (start, restart, end of shadow). */
      readonly deltas?: readonly Delta[];
      /** Delta gossip (see DeltaSyn); absent: full Scuttlebutt, digests' versions count heartbeats. */
      readonly delta?: DeltaSyn;
    })
  | (Envelope & { readonly kind: 'ack'; readonly deltas: readonly Delta[]; readonly requests: readonly Digest[] })
  | (Envelope & {
      readonly kind: 'ack2';
      readonly deltas: readonly Delta[];
      /** The answer to a light SYN whose table hash matched: our heartbeat vector and broadcasts. */
      readonly delta?: DeltaSyn;
    });

/**
 * What a delta-gossip SYN adds. A light SYN (`tableHash` set) lists no digests: it carries
 * the sender's table hash, its heartbeats as a vector in roster order, and field changes
 * as broadcasts. The receiver, after taking the broadcasts, answers with an ACK2 carrying
 * its own vector and broadcasts when its table hash is the same (heartbeats go both ways,
 * as in a full exchange), and with a full SYN when it differs. A full SYN (no `tableHash`) lists every digest, their
 * versions being field versions and their heartbeats apart, and is answered as always.
 */
export interface DeltaSyn {
  /** The sender's generation (its digest is not in a light SYN). */
  readonly generation: number;
  /** Hash of the roster (members and generations): equal rosters order heartbeat vectors alike. */
  readonly roster: string;
  readonly tableHash?: string;
  /** One little-endian u32 heartbeat per roster member, in id order (light SYN). */
  readonly heartbeats?: Uint8Array;
  readonly broadcasts: readonly Delta[];
}

/** A message and the peer to send it to. */
export interface Outbound {
  /** host:port */
  readonly to: string;
  readonly message: GossipMessage;
}

/** Most digests or deltas one message may carry (a 100k-node cluster is out of scope). */
export const MAX_ENTRIES = 10_000;
const HEX16 = /^[0-9a-f]{16}$/;

/**
 * Message `m` with only its well-formed entries, and why others were skipped; or why it is
 * refused whole (another cluster than `clusterName`, a bad envelope, a bad delta part).
 */
export function checkMessage(
  m: GossipMessage,
  clusterName: string,
): string | { message: GossipMessage; skipped: string[] } {
  if (m === null || typeof m !== 'object') return 'not a message';
  if (m.cluster !== clusterName) return `cluster name "${show(m.cluster)}" is not ours ("${clusterName}")`;
  if (typeof m.from !== 'string' || m.from.length === 0) return 'no sender id';
  if (typeof m.fromAddr !== 'string' || !isAddress(m.fromAddr))
    return `sender address ${show(m.fromAddr)} is not host:port`;
  const lists: unknown[] =
    m.kind === 'syn'
      ? [m.digests, m.deltas ?? []]
      : m.kind === 'ack'
        ? [m.deltas, m.requests]
        : m.kind === 'ack2'
          ? [m.deltas]
          : [];
  if (lists.length === 0) return `unknown kind ${show((m as { kind: unknown }).kind)}`;
  for (const l of lists)
    if (!Array.isArray(l) || l.length > MAX_ENTRIES) return `lists must be arrays of at most ${MAX_ENTRIES}`;
  const skipped: string[] = [];
  const keep = <T>(xs: readonly T[], check: (x: T) => string | undefined): T[] =>
    xs.filter((x) => {
      const why = check(x);
      if (why !== undefined) skipped.push(why);
      return why === undefined;
    });
  const envelope = { cluster: m.cluster, from: m.from, fromAddr: m.fromAddr };
  let delta: DeltaSyn | undefined;
  if ((m.kind === 'syn' || m.kind === 'ack2') && m.delta !== undefined) {
    const why = checkDeltaSyn(m.delta);
    if (why !== undefined) return why;
    delta = { ...m.delta, broadcasts: keep(m.delta.broadcasts, checkDelta) };
  }
  const message: GossipMessage =
    m.kind === 'syn'
      ? {
          ...envelope,
          kind: 'syn',
          digests: keep(m.digests, checkDigest),
          deltas: keep(m.deltas ?? [], checkDelta),
          ...(delta && { delta }),
        }
      : m.kind === 'ack'
        ? { ...envelope, kind: 'ack', deltas: keep(m.deltas, checkDelta), requests: keep(m.requests, checkDigest) }
        : { ...envelope, kind: 'ack2', deltas: keep(m.deltas, checkDelta), ...(delta && { delta }) };
  return { message, skipped };
}

/** Why a SYN's delta part is unacceptable (the message is refused whole), or undefined. */
function checkDeltaSyn(d: DeltaSyn): string | undefined {
  if (d === null || typeof d !== 'object') return 'delta must be an object';
  if (!Number.isSafeInteger(d.generation) || d.generation <= 0)
    return 'delta.generation must be a positive whole number';
  if (typeof d.roster !== 'string' || !HEX16.test(d.roster)) return 'delta.roster must be 16 hex digits';
  if (d.tableHash !== undefined && (typeof d.tableHash !== 'string' || !HEX16.test(d.tableHash)))
    return 'delta.tableHash must be 16 hex digits';
  if (
    d.heartbeats !== undefined &&
    (!(d.heartbeats instanceof Uint8Array) || d.heartbeats.length % 4 !== 0 || d.heartbeats.length > 4 * MAX_ENTRIES)
  ) {
    return `delta.heartbeats must be whole u32s, at most ${MAX_ENTRIES}`;
  }
  if (!Array.isArray(d.broadcasts) || d.broadcasts.length > MAX_ENTRIES)
    return `delta.broadcasts must be an array of at most ${MAX_ENTRIES}`;
  return undefined;
}

/** A value from the network for a message: never throws (String() does on some objects). */
function show(v: unknown): string {
  return typeof v === 'string'
    ? v.slice(0, 100)
    : typeof v === 'number' || typeof v === 'boolean' || v == null
      ? `${v}`
      : typeof v;
}
