/**
 * The membership events a node keeps for its status page (/api/events): an event repeated
 * in a row is one entry with a count and the latest time, and the bucket table's digest
 * changing on a peer is no event at all.
 */
import type { Logger } from 'pino';
import { describe, expect, it } from 'vitest';
import { Gossiper, type MembershipEvent } from '../../../src/membership/gossiper.js';
import { MembershipLog } from '../../../src/node/membership-log.js';

function recorder(): { log: Logger; lines: { level: string; msg: string }[] } {
  const lines: { level: string; msg: string }[] = [];
  const at = (level: string) => (_obj: object, msg: string) => void lines.push({ level, msg });
  return { log: { info: at('info'), warn: at('warn'), error: at('error') } as unknown as Logger, lines };
}

function setUp(): {
  events: MembershipLog;
  record: (e: MembershipEvent) => void;
  lines: { level: string; msg: string }[];
  tick: () => void;
} {
  let now = 1_000;
  const { log, lines } = recorder();
  const events = new MembershipLog(log, () => now);
  const gossiper = new Gossiper({
    id: 'a',
    clusterName: 'c',
    generation: 1,
    fields: { addr: '127.0.0.1:1' },
    seeds: [],
    random: Math.random,
    now: 0,
  });
  return { events, record: (e) => events.record(gossiper, e), lines, tick: () => void (now += 1_000) };
}

describe('membership log', () => {
  it('folds an event repeated in a row into one entry, counted, at the time of the latest', () => {
    const { events, record, tick } = setUp();
    record({ type: 'discovered', id: 'b' });
    for (let i = 0; i < 12; i++) {
      tick();
      record({ type: 'changed', id: 'b', fields: ['hinted'] });
    }
    expect(events.recent()).toEqual([
      { atMs: 1_000, level: 'info', peer: 'b', msg: 'peer discovered' },
      { atMs: 13_000, level: 'info', peer: 'b', msg: 'peer state changed', detail: { fields: ['hinted'] }, count: 12 },
    ]);
  });

  it('keeps apart events that differ in peer, message or detail, and a repeat that is not in a row', () => {
    const { events, record } = setUp();
    record({ type: 'changed', id: 'b', fields: ['hinted'] });
    record({ type: 'changed', id: 'c', fields: ['hinted'] }); // another peer
    record({ type: 'changed', id: 'c', fields: ['topo'] }); // another detail
    record({ type: 'refused', from: 'c', reason: 'cluster x, not c' }); // another message
    record({ type: 'refused', from: 'c', reason: 'cluster x, not c' });
    record({ type: 'changed', id: 'b', fields: ['hinted'] }); // as the first, but not right after it
    expect(events.recent().map((e) => [e.peer, e.msg, e.detail, e.count])).toEqual([
      ['b', 'peer state changed', { fields: ['hinted'] }, undefined],
      ['c', 'peer state changed', { fields: ['hinted'] }, undefined],
      ['c', 'peer state changed', { fields: ['topo'] }, undefined],
      ['c', 'gossip refused', { reason: 'cluster x, not c' }, 2],
      ['b', 'peer state changed', { fields: ['hinted'] }, undefined],
    ]);
  });

  it('logs every event, the folded ones included', () => {
    const { record, lines } = setUp();
    for (let i = 0; i < 3; i++) record({ type: 'refused', from: 'c', reason: 'wrong cluster' });
    expect(lines).toEqual(Array.from({ length: 3 }, () => ({ level: 'warn', msg: 'gossip refused' })));
  });

  it("takes no event of a peer's bucket table digest (buckets) changing, but still of what changed with it", () => {
    const { events, record, lines } = setUp();
    for (let i = 0; i < 5; i++) record({ type: 'changed', id: 'b', fields: ['buckets'] });
    record({ type: 'changed', id: 'b', fields: ['buckets', 'load'] });
    expect(events.recent()).toEqual([]);
    expect(lines).toEqual([]);
    record({ type: 'changed', id: 'b', fields: ['buckets', 'topo'] });
    expect(events.recent()).toEqual([
      expect.objectContaining({ peer: 'b', msg: 'peer state changed', detail: { fields: ['topo'] } }),
    ]);
  });

  it('keeps the last 100 entries, a folded one counting as one', () => {
    const { events, record } = setUp();
    for (let i = 0; i < 150; i++) record({ type: 'changed', id: `p${i}`, fields: ['topo'] });
    for (let i = 0; i < 50; i++) record({ type: 'changed', id: 'p149', fields: ['topo'] });
    const kept = events.recent();
    expect(kept).toHaveLength(100);
    expect(kept[0]!.peer).toBe('p50');
    expect(kept.at(-1)).toMatchObject({ peer: 'p149', count: 51 });
  });
});
