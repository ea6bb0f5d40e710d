/**
 * One log line per membership event, with the peer's id as a field (docs/architecture.md: structured
 * logs). Periodic figures (load, empty, keys, hints, progress) are not logged: they change every few seconds.
 */

import { performance } from 'node:perf_hooks';
import type { Logger } from 'pino';
import type { Gossiper, MembershipEvent } from '../membership/gossiper.js';
import { field } from '../membership/endpoint.js';

/** Fields every node refreshes every few seconds (load, keys, hints held, streaming progress): their changes are not events. */
const PERIODIC = new Set(['load', 'empty', 'keys', 'hints', 'progress']);

export function logMembershipEvent(log: Logger, gossiper: Gossiper, e: MembershipEvent): void {
  switch (e.type) {
    case 'up':
    case 'down': {
      const state = gossiper.state(e.id);
      const address = state === undefined ? undefined : field(state, 'addr');
      const phi = Number(gossiper.detector.phi(e.id, performance.now()).toFixed(2));
      log.info({ peer: e.id, address, phi }, `peer ${e.type}`);
      break;
    }
    case 'discovered':
      log.info({ peer: e.id }, 'peer discovered');
      break;
    case 'restarted':
      log.info({ peer: e.id, generation: e.generation }, 'peer restarted');
      break;
    case 'changed':
      if (e.fields.some((f) => !PERIODIC.has(f))) log.info({ peer: e.id, fields: e.fields }, 'peer state changed');
      break;
    case 'refused':
      log.warn({ peer: e.from, reason: e.reason }, 'gossip refused');
      break;
    case 'paused':
      log.warn({ pausedMs: Math.round(e.ms) }, 'this process stalled; peers are not judged on the silence it caused');
      break;
    case 'impostor':
      log.error({ generation: e.generation }, 'another process gossips under this node id with a newer generation; two nodes share one id');
      break;
  }
}
