/**
 * One log line per membership event, with the peer's id as a field (docs/architecture.md: structured
 * logs), and the last of them kept for the status page (http-server.ts). Periodic figures (load,
 * empty, keys, hints, progress) are neither logged nor kept: they change every few seconds.
 */

import { performance } from 'node:perf_hooks';
import type { Logger } from 'pino';
import type { Gossiper, MembershipEvent } from '../membership/gossiper.js';
import { field } from '../membership/endpoint.js';

/** Fields every node refreshes every few seconds (load, keys, hints held, streaming progress): their changes are not events. */
const PERIODIC = new Set(['load', 'empty', 'keys', 'hints', 'progress']);

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
}

/** The log line an event makes, or undefined for one not worth a line. */
export function describeMembershipEvent(gossiper: Gossiper, e: MembershipEvent): Omit<RecordedEvent, 'atMs'> | undefined {
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
      const fields = e.fields.filter((f) => !PERIODIC.has(f));
      if (fields.length === 0) return undefined;
      const state = gossiper.state(e.id);
      const status = fields.includes('status') && state !== undefined ? field(state, 'status') : undefined;
      return { level: 'info', peer: e.id, msg: 'peer state changed', detail: status === undefined ? { fields } : { fields, status } };
    }
    case 'refused':
      return { level: 'warn', peer: e.from, msg: 'gossip refused', detail: { reason: e.reason } };
    case 'paused':
      return { level: 'warn', msg: 'this process stalled; peers are not judged on the silence it caused', detail: { pausedMs: Math.round(e.ms) } };
    case 'impostor':
      return { level: 'error', msg: 'another process gossips under this node id with a newer generation; two nodes share one id', detail: { generation: e.generation } };
  }
}

/** Logs membership events and keeps the last KEEP of them. */
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
    this.#recent.push({ atMs: this.now(), ...d });
    if (this.#recent.length > KEEP) this.#recent.splice(0, this.#recent.length - KEEP);
  }

  /** The last events, oldest first. */
  recent(): readonly RecordedEvent[] {
    return this.#recent;
  }
}
