/**
 * The nemesis's plan, as pure functions of a seed: which faults happen when, and the shape
 * of each network partition. The run (run.ts) applies them to real processes and
 * namespaces; nothing here touches the system, so property tests check the shapes and the
 * seed reproduces the schedule.
 */
import { mulberry32 } from '../../src/ring/allocate-tokens.js';
import type { Grudge } from '../../testkit/jepsen/net.js';

export const NEMESES = [
  'partition',
  'kill',
  'pause',
  'packet',
  'clock',
  'membership',
  'slow',
  'disk-full',
  'corrupt',
] as const;
export type Nemesis = (typeof NEMESES)[number];

export const PARTITION_SHAPES = ['isolate', 'halves', 'majorities-ring', 'bridge', 'zone', 'one-way'] as const;
export type PartitionShape = (typeof PARTITION_SHAPES)[number];

/**
 * The slow nemesis's gray failures, one node at a time (testkit/jepsen/slow.ts, net.ts):
 * - cpu: the node's process held to a small share of one core (a cpu cgroup);
 * - strobe: the process stopped and continued in turn (SIGSTOP / SIGCONT);
 * - delay: every link of the node delayed, with jitter, each way (a delaying proxy).
 */
export const SLOW_SHAPES = ['cpu', 'strobe', 'delay'] as const;
export type SlowShape = (typeof SLOW_SHAPES)[number];

/** The kinds with shapes, each shape counted as a kind of its own in the schedule's first pass. */
const SHAPES: Partial<Record<Nemesis, readonly (PartitionShape | SlowShape)[]>> = {
  partition: PARTITION_SHAPES,
  slow: SLOW_SHAPES,
};

export interface Partition {
  readonly shape: PartitionShape;
  readonly grudges: readonly Grudge[];
  /** For the report: who is cut off from whom, in words. */
  readonly describe: string;
}

export interface Member {
  readonly id: string;
  readonly zone: string;
}

/** A Fisher–Yates shuffle driven by `random`. */
export function shuffle<T>(xs: readonly T[], random: () => number): T[] {
  const out = [...xs];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/** Every node in `a` and every node in `b` stop hearing each other (both directions). */
function cut(a: readonly string[], b: readonly string[]): Grudge[] {
  const out: Grudge[] = [];
  for (const x of a)
    for (const y of b) out.push({ from: x, to: y, initiatedOnly: false }, { from: y, to: x, initiatedOnly: false });
  return out;
}

const list = (xs: readonly string[]): string => `{${xs.join(',')}}`;

/**
 * A partition of the given shape over `members` (at least 3). The shapes are Jepsen's:
 * - isolate: one node alone;
 * - halves: two random halves;
 * - majorities-ring: the nodes on a random ring, each seeing itself and its nearest
 *   neighbours, a majority, so that every node sees a majority and no two the same one;
 * - bridge: two halves that cannot talk, and one node that sees both;
 * - zone: every node of one zone cut off from the rest;
 * - one-way: two halves where A's calls reach B but B's calls to A are dropped.
 */
export function partition(shape: PartitionShape, members: readonly Member[], random: () => number): Partition {
  const ids = shuffle(
    members.map((m) => m.id),
    random,
  );
  const n = ids.length;
  if (n < 3) throw new Error(`a partition needs at least 3 nodes, got ${n}`);
  switch (shape) {
    case 'isolate': {
      const [alone, ...rest] = ids;
      return { shape, grudges: cut([alone!], rest), describe: `${alone} isolated from ${list(rest)}` };
    }
    case 'halves': {
      const a = ids.slice(0, Math.floor(n / 2)),
        b = ids.slice(Math.floor(n / 2));
      return { shape, grudges: cut(a, b), describe: `${list(a)} | ${list(b)}` };
    }
    case 'majorities-ring': {
      const visible = majoritiesRing(ids);
      const grudges: Grudge[] = [];
      for (const [to, sees] of visible)
        for (const from of ids) if (!sees.has(from)) grudges.push({ from, to, initiatedOnly: false });
      return { shape, grudges, describe: [...visible].map(([id, s]) => `${id} sees ${list([...s])}`).join('; ') };
    }
    case 'bridge': {
      const [bridge, ...rest] = ids;
      const a = rest.slice(0, Math.floor(rest.length / 2)),
        b = rest.slice(Math.floor(rest.length / 2));
      return { shape, grudges: cut(a, b), describe: `${list(a)} | ${list(b)}, ${bridge} sees both` };
    }
    case 'zone': {
      const zones = [...new Set(members.map((m) => m.zone))].sort();
      if (zones.length < 2) return partition('halves', members, random);
      const zone = zones[Math.floor(random() * zones.length)]!;
      const inside = members.filter((m) => m.zone === zone).map((m) => m.id),
        outside = members.filter((m) => m.zone !== zone).map((m) => m.id);
      return {
        shape,
        grudges: cut(inside, outside),
        describe: `zone ${zone} ${list(inside)} cut off from ${list(outside)}`,
      };
    }
    case 'one-way': {
      const a = ids.slice(0, Math.floor(n / 2)),
        b = ids.slice(Math.floor(n / 2));
      const grudges: Grudge[] = [];
      for (const x of a) for (const y of b) grudges.push({ from: y, to: x, initiatedOnly: true });
      return { shape, grudges, describe: `${list(a)} reach ${list(b)}; ${list(b)} cannot reach ${list(a)}` };
    }
  }
}

/** For nodes in ring order: each sees itself and the nearest neighbours that make a majority. */
export function majoritiesRing(ring: readonly string[]): Map<string, Set<string>> {
  const n = ring.length,
    majority = Math.floor(n / 2) + 1;
  const out = new Map<string, Set<string>>();
  for (let i = 0; i < n; i++) {
    const sees = new Set<string>([ring[i]!]);
    // Alternate right and left neighbours until the set is a majority.
    for (let d = 1; sees.size < majority; d++) {
      sees.add(ring[(i + d) % n]!);
      if (sees.size < majority) sees.add(ring[(i - d + n) % n]!);
    }
    out.set(ring[i]!, sees);
  }
  return out;
}

/** One fault in the schedule: what, when it starts (ms from the workload's start), how long it lasts. */
export interface Fault {
  readonly kind: Nemesis;
  /** For a partition, its shape; for a slow fault, which one. */
  readonly shape?: PartitionShape | SlowShape;
  readonly atMs: number;
  readonly forMs: number;
  /** A number in [0, 1) drawn for this fault: the run derives its random choices from it. */
  readonly seed: number;
}

export interface ScheduleOptions {
  readonly seed: number;
  readonly nemeses: readonly Nemesis[];
  /** The workload's length; no fault starts in its last `everyMs`. */
  readonly timeMs: number;
  /** Mean time from one fault's start to the next. */
  readonly everyMs: number;
}

/**
 * The schedule: one fault at a time, each lasting 40–70% of the interval, the gaps jittered.
 * Each partition shape and each slow shape counts as its own kind. The first faults go
 * through every kind once, in a seeded order, so that a short run still meets each; after
 * that each is drawn at random.
 */
export function schedule(o: ScheduleOptions): Fault[] {
  const random = mulberry32(o.seed);
  const kinds = o.nemeses.flatMap(
    (kind): { kind: Nemesis; shape?: PartitionShape | SlowShape }[] =>
      SHAPES[kind]?.map((shape) => ({ kind, shape })) ?? [{ kind }],
  );
  const first = shuffle(kinds, random);
  const out: Fault[] = [];
  let at = o.everyMs * (0.3 + 0.4 * random());
  for (let i = 0; at + o.everyMs <= o.timeMs; i++) {
    const k = i < first.length ? first[i]! : kinds[Math.floor(random() * kinds.length)]!;
    const forMs = Math.round(o.everyMs * (0.4 + 0.3 * random()));
    out.push({ ...k, atMs: Math.round(at), forMs, seed: random() });
    at += o.everyMs * (0.8 + 0.4 * random());
  }
  return out;
}

/** What `--nemesis` names: a comma-separated list of NEMESES, or 'all'. */
export function parseNemeses(text: string): Nemesis[] {
  if (text === 'all') return [...NEMESES];
  const out: Nemesis[] = [];
  for (const name of text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    if (!(NEMESES as readonly string[]).includes(name))
      throw new Error(`unknown nemesis "${name}"; known: ${NEMESES.join(', ')} (or all)`);
    out.push(name as Nemesis);
  }
  if (out.length === 0) throw new Error(`name at least one nemesis: ${NEMESES.join(', ')} (or all)`);
  return out;
}
