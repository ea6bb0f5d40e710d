/**
 * The reconciliation of one gossip exchange over the member table (Scuttlebutt): the
 * digests a SYN lists, the ACK to a SYN's digests (the states the peer lacks, requests for
 * those we lack), and the states an ACK's requests ask for. Full Scuttlebutt's digests
 * count heartbeats in their versions; delta gossip's full SYN lists field versions with
 * the heartbeats beside them.
 *
 * Owns: what each side sends and asks for. Must not: take what a peer sent (the gossiper
 * applies deltas and heartbeats), judge who is up, do I/O or read clocks.
 */

import type { Delta, Digest } from './endpoint.js';
import type { GossipMessage } from './gossip-message.js';
import type { MemberTable } from './member-table.js';

/** A SYN, checked. */
export type Syn = Extract<GossipMessage, { kind: 'syn' }>;

/**
 * Every digest of `table`: full Scuttlebutt's ('legacy': versions count heartbeats, our own
 * left out in a shadow round) or delta gossip's full SYN's ('full': field versions,
 * heartbeats apart).
 */
export function synDigests(table: MemberTable, mode: 'legacy' | 'full', shadow: boolean): Digest[] {
  const digests: Digest[] = [];
  if (mode === 'full') {
    for (const s of table.entries())
      digests.push({
        id: s.id,
        generation: s.generation,
        version: table.fieldVersion(s.id),
        heartbeat: table.beatOf(s.id),
      });
    return digests;
  }
  for (const s of table.entries())
    if (!hidden(table, shadow, s.id)) digests.push({ id: s.id, generation: s.generation, version: table.complete(s) });
  return digests;
}

/**
 * The ACK to SYN `m`'s digests: what of each state the peer lacks, and requests for what we
 * lack; states it did not mention go whole. In a shadow round (`shadow`) it learns nothing
 * of us, and a digest of our id asks for that earlier incarnation. On delta gossip's full
 * SYN, versions are field versions; a heartbeat newer than ours is handed to `heartbeat`
 * as its digest is read, and ours go back only when the rosters differ (else heartbeat
 * vectors carry them).
 */
export function answerDigests(
  table: MemberTable,
  m: Syn,
  shadow: boolean,
  heartbeat: (id: string, heartbeat: number) => void,
): { deltas: Delta[]; requests: Digest[] } {
  const dx = m.delta;
  const delta = dx !== undefined;
  const sameRoster = delta && !shadow && dx.roster === table.rosterHash();
  const deltas: Delta[] = [];
  const requests: Digest[] = [];
  let known = 0;
  for (const d of m.digests) {
    if (hidden(table, shadow, d.id)) {
      // An earlier incarnation of our id: ask for it (formerSelf), say nothing of us.
      if (d.generation <= table.self.generation) requests.push({ id: d.id, generation: d.generation, version: 0 });
      continue;
    }
    const local = table.entry(d.id);
    const localBeat = local === undefined ? 0 : table.beatOf(local.id);
    if (local !== undefined) known++;
    const version = local === undefined ? 0 : delta ? table.fieldVersion(d.id) : table.complete(local);
    if (local === undefined || local.generation < d.generation) {
      requests.push({ id: d.id, generation: d.generation, version: 0 });
    } else if (local.generation > d.generation) {
      deltas.push(table.deltaTo(m.from, local, 0));
    } else if (version < d.version) {
      requests.push({ id: d.id, generation: d.generation, version });
    } else if (version > d.version) {
      deltas.push(table.deltaTo(m.from, local, d.version));
    } else if (delta && !sameRoster && localBeat > (d.heartbeat ?? 0)) {
      deltas.push({ id: d.id, generation: d.generation, heartbeat: localBeat, fields: [], since: version });
    }
    if (
      delta &&
      local !== undefined &&
      local.generation === d.generation &&
      d.id !== table.id &&
      (d.heartbeat ?? 0) > localBeat
    ) {
      heartbeat(d.id, d.heartbeat!);
    }
  }
  if (known < table.size) {
    // States the peer did not mention at all: send them whole.
    const mentioned = new Set(m.digests.map((d) => d.id));
    for (const s of table.entries())
      if (!mentioned.has(s.id) && !hidden(table, shadow, s.id)) deltas.push(table.deltaTo(m.from, s, 0));
  }
  return { deltas, requests };
}

/**
 * The states an ACK's `requests` from peer `from` ask for: each past the version asked, or
 * whole when we hold a newer generation; none of a member we hold older or not at all, and
 * none of us in a shadow round.
 */
export function answerRequests(
  table: MemberTable,
  requests: readonly Digest[],
  from: string,
  shadow: boolean,
): Delta[] {
  const deltas: Delta[] = [];
  for (const r of requests) {
    const local = table.entry(r.id);
    if (local === undefined || local.generation < r.generation || hidden(table, shadow, r.id)) continue;
    deltas.push(table.deltaTo(from, local, local.generation === r.generation ? r.version : 0));
  }
  return deltas;
}

/** In a shadow round our own state is never sent. */
function hidden(table: MemberTable, shadow: boolean, id: string): boolean {
  return shadow && id === table.id;
}
