/**
 * One log line per membership event, with the peer's id as a field (docs/architecture.md: structured
 * logs), and the last of them kept for the status page (http-server.ts). Periodic figures (load,
 * empty, keys, hints, progress) are neither logged nor kept: they change every few seconds; nor is
 * the bucket table's digest (see NOT_MEMBERSHIP). The kept list folds an event that repeats the one
 * before it (same level, peer, message and detail) into that one, counted, so that a peer refused
 * every round is one line of the page, not a hundred.
 */

import { performance } from 'node:perf_hooks';
import { isDeepStrictEqual } from 'node:util';
import type { Logger } from 'pino';
import type { Gossiper, MembershipEvent } from '../membership/gossiper.js';
import { field } from '../membership/endpoint.js';

/** Fields every node refreshes every few seconds (load, keys, hints held, streaming progress): their changes are not events. */
const PERIODIC = new Set(['load', 'empty', 'keys', 'hints', 'progress', 'disk']);

/**
 * Fields gossiped for other parts of the node, whose changes say nothing of the peer as a
 * member: `buckets` is the digest of the peer's bucket table (bucket-sync.ts), which every
 * peer gossips anew after each bucket create or set anywhere in the cluster, and after each
 * merge on the way to agreement: as events, one bucket change would be N-1 of them on every
 * node. The change itself is logged by each node that merges it (`bucket table merged from
 * a peer`), and the status page's Buckets table shows each bucket's latest change.
 * `purged` lists the bucket deletions the peer has purged (bucket-purge.ts): `bucket
 * delete` shows them.
 */
const NOT_MEMBERSHIP = new Set(['buckets', 'purged']);

/** Events the status page shows, newest last. */
const KEEP = 100;

export interface RecordedEvent {
  /** Wall time, ms since the epoch. */
  readonly atMs: number;
  readonly level: 'info' | 'warn' | 'error';
  readonly msg: string;
  /** The peer it is about; absent for events about this node itself. */
  readonly peer?: string;
  readonly detail?: Record<string, unknown>;
  /** How many times it happened in a row, atMs being the latest; absent when once. */
  readonly count?: number;
}

/** The log line an event makes, or undefined for one not worth a line. */
export function describeMembershipEvent(
  gossiper: Gossiper,
  e: MembershipEvent,
): Omit<RecordedEvent, 'atMs'> | undefined {
  switch (e.type) {
    case 'up':
    case 'down': {
      const state = gossiper.state(e.id);
      const address = state === undefined ? undefined : field(state, 'addr');
      const phi = Number(gossiper.detector.phi(e.id, performance.now()).toFixed(2));
      return { level: 'info', peer: e.id, msg: `peer ${e.type}`, detail: { address, phi } };
    }
    case 'discovered':
      return { level: 'info', peer: e.id, msg: 'peer discovered' };
    case 'restarted':
      return { level: 'info', peer: e.id, msg: 'peer restarted', detail: { generation: e.generation } };
    case 'changed': {
      const fields = e.fields.filter((f) => !PERIODIC.has(f) && !NOT_MEMBERSHIP.has(f));
      if (fields.length === 0) return undefined;
      const state = gossiper.state(e.id);
      const status = fields.includes('status') && state !== undefined ? field(state, 'status') : undefined;
      return {
        level: 'info',
        peer: e.id,
        msg: 'peer state changed',
        detail: status === undefined ? { fields } : { fields, status },
      };
    }
    case 'refused':
      return { level: 'warn', peer: e.from, msg: 'gossip refused', detail: { reason: e.reason } };
    case 'paused':
      return {
        level: 'warn',
        msg: 'this process stalled; peers are not judged on the silence it caused',
        detail: { pausedMs: Math.round(e.ms) },
      };
    case 'impostor':
      return {
        level: 'error',
        msg: 'another process gossips under this node id with a newer generation; two nodes share one id',
        detail: { generation: e.generation },
      };
  }
}

/** The same event as `e`, but for its time and count: what folds into `e`. */
function repeats(e: RecordedEvent, d: Omit<RecordedEvent, 'atMs'>): boolean {
  return e.level === d.level && e.msg === d.msg && e.peer === d.peer && isDeepStrictEqual(e.detail, d.detail);
}

/** Logs membership events and keeps the last KEEP of them, a repeat of the last folded into it. */
export class MembershipLog {
  readonly #recent: RecordedEvent[] = [];

  constructor(
    private readonly log: Logger,
    private readonly now: () => number = Date.now,
  ) {}

  record(gossiper: Gossiper, e: MembershipEvent): void {
    const d = describeMembershipEvent(gossiper, e);
    if (d === undefined) return;
    this.log[d.level]({ ...(d.peer !== undefined && { peer: d.peer }), ...d.detail }, d.msg);
    const last = this.#recent.at(-1);
    if (last !== undefined && repeats(last, d)) {
      this.#recent[this.#recent.length - 1] = { ...last, atMs: this.now(), count: (last.count ?? 1) + 1 };
      return;
    }
    this.#recent.push({ atMs: this.now(), ...d });
    if (this.#recent.length > KEEP) this.#recent.splice(0, this.#recent.length - KEEP);
  }

  /** The last events, oldest first. */
  recent(): readonly RecordedEvent[] {
    return this.#recent;
  }
}
