/**
 * Bounded clocks under churn (docs/causality.md#bounded-clocks): a simulated cluster of
 * real stores (MemoryEngine, one fake clock), placed by a real ring (src/ring's Ring and
 * placement, N = 3; random tokens, 8 a node),
 * run through random histories: puts and deletes (with the context of a read from a
 * random replica, or blind), replication that reaches a replica now, later through a
 * hint held by another node (delivered late but within the grace, or dropped past it by
 * the hint store), or not at all (left to repair); joins and leaves (gainers merge the
 * key from its old replicas, losers delete it as cleanup does, leavers hand over their
 * hints and are gone for good); clean and unclean restarts (the latter retire epochs);
 * repairs that advance each node's confirmation time; the clock past the grace; tombstone
 * purges and clock prune passes at random times. Then quiescence: every hint delivered,
 * full repair, the grace passed, a prune pass everywhere, and one more repair.
 *
 * Reports what the property test checks and sim:clocks prints: writes no other write's
 * read saw that are missing after quiescence (or superseded ones that came back), dots
 * issued twice, replicas whose records differ, and clock entries per key before and
 * after the last prune. With `prune: false` nothing is pruned (the baseline).
 *
 * Owns: the model of the cluster around the stores. Must not: decide anything the store,
 * ring or versions decide (it calls them).
 */
import { MemoryEngine, Store } from '../src/storage/index.js';
import { decodeRecord, versionBytes } from '../src/kinds/versions/codec.js';
import { EMPTY_VERSIONS } from '../src/kinds/versions/versions.js';
import type { Versions } from '../src/kinds/versions/versions.js';
import { Ring, tokenOf } from '../src/ring/index.js';
import type { Member } from '../src/ring/index.js';
import { mulberry32 } from '../src/ring/allocate-tokens.js';

export interface ClockSimOptions {
  readonly seed: number;
  /** Joins plus leaves. */
  readonly churn: number;
  readonly nodes?: number;
  readonly keys?: number;
  /** Random operations between two ring changes. */
  readonly opsPerChange?: number;
  readonly prune?: boolean;
}

export interface ClockSimReport {
  /** Per key: writes missing or superseded writes held after quiescence. */
  readonly lost: string[];
  readonly resurrected: string[];
  readonly dotsIssuedTwice: string[];
  /** Keys whose replicas hold different versions after quiescence. */
  readonly diverged: string[];
  /** Clock entries of every replica's record of every key, at quiescence before the last prune pass and after it. */
  readonly entriesBefore: number[];
  readonly entriesAfter: number[];
  readonly writes: number;
  readonly joins: number;
  readonly leaves: number;
  readonly pruned: number;
  readonly hintsExpired: number;
}

const N = 3;
const GRACE = 10_000;

interface Node {
  readonly id: string;
  readonly engine: MemoryEngine;
  store: Store;
}

/** A dot of one key (dots are per key: every actor counts each key's writes from 1). */
const dotOf = (key: string, actor: string, counter: number): string =>
  `${key} ${Buffer.from(actor, 'latin1').toString('hex')}/${counter}`;

export async function runClockSim(o: ClockSimOptions): Promise<ClockSimReport> {
  const rnd = mulberry32(o.seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  const chance = (p: number): boolean => rnd() < p;
  let t = 1_000_000;
  const now = (): number => t;
  const prune = o.prune ?? true;
  const keys = Array.from({ length: o.keys ?? 16 }, (_, i) => `key-${i}`);
  const keyOfToken = new Map(keys.map((k) => [tokenOf(k), k]));
  const nodes = new Map<string, Node>();
  let serial = 0;
  // Store ids from the seed too: actors' byte order decides sibling order, so a run replays exactly.
  const randomBytes = (n: number): Buffer => Buffer.from(Array.from({ length: n }, () => Math.floor(rnd() * 256)));
  const open = (engine: MemoryEngine) =>
    Store.open({ engine, now, randomBytes, tombstoneGraceMs: GRACE, clockPruneGraceMs: GRACE });
  const addNode = async (): Promise<Node> => {
    const engine = new MemoryEngine();
    const node = { id: `n${serial++}`, engine, store: await open(engine) };
    nodes.set(node.id, node);
    return node;
  };
  for (let i = 0; i < (o.nodes ?? 10); i++) await addNode();
  // Random tokens (8 a node): the ring's placement is real, its token allocators' cost is not what this measures.
  const member = (id: string): Member => ({
    id,
    tokens: Array.from(
      { length: 8 },
      () => (BigInt(Math.floor(rnd() * 2 ** 32)) << 32n) | BigInt(Math.floor(rnd() * 2 ** 32)),
    ),
  });
  let members = [...nodes.keys()].map(member);
  let ring = Ring.build(members);
  const replicas = (key: string): Node[] => ring.preferenceList(key, N).map((id) => nodes.get(id)!);
  /** Per node and key: as of when a repair confirmed every replica of the key holds what the node held. */
  const confirmed = new Map<string, Map<string, number>>();
  const confirmedBefore =
    (id: string) =>
    (token: bigint): number =>
      confirmed.get(id)?.get(keyOfToken.get(token) ?? '') ?? 0;

  // The oracle's bookkeeping: each write's id is its value (a delete's, its tombstone's dot).
  const written: string[] = [];
  const superseded = new Set<string>();
  const tombIds = new Map<string, string>();
  const dots = new Set<string>();
  const dotsIssuedTwice: string[] = [];
  const idsOf = (key: string, record: Buffer | undefined): string[] =>
    versionsOf(record).siblings.map((s) => tombIds.get(dotOf(key, s.actor, s.counter)) ?? String(s.value));

  const write = async (): Promise<void> => {
    const key = pick(keys);
    const reps = replicas(key);
    const at = pick(reps);
    const id = `w${written.length}`;
    let context: Buffer | undefined;
    if (!chance(0.2)) {
      const from = pick(reps);
      context = (await from.store.get(key)).context;
      for (const seen of idsOf(key, await from.store.getRecord(key))) superseded.add(seen);
    }
    const before = new Set(
      versionsOf(await at.store.getRecord(key)).siblings.map((s) => dotOf(key, s.actor, s.counter)),
    );
    const del = chance(0.15);
    const w = del ? await at.store.delete(key, context) : await at.store.put(key, Buffer.from(id), context);
    written.push(id);
    for (const s of decodeRecord(w.record).versions.siblings) {
      const dot = dotOf(key, s.actor, s.counter);
      if (before.has(dot)) continue;
      if (dots.has(dot)) dotsIssuedTwice.push(dot);
      dots.add(dot);
      if (del) tombIds.set(dot, id);
    }
    for (const r of reps) {
      if (r === at) continue;
      const x = rnd();
      if (x < 0.6) await r.store.merge(key, w.record);
      else if (x < 0.85) {
        const fallback = pick([...nodes.values()].filter((n) => !reps.includes(n)));
        await fallback.store.hints.add(r.id, key, w.record);
      } // else: missed, left to repair
    }
  };

  /** Deliver every hint `from` holds: to its target, or, for a node gone, to the key's replicas now. */
  const deliver = async (from: Node): Promise<void> => {
    for (const target of from.store.hints.targets().keys()) {
      for await (const batch of from.store.hints.list(target)) {
        for (const h of batch) {
          const to = nodes.get(target);
          for (const r of to ? [to] : replicas(String(h.key))) await r.store.merge(h.key, h.record);
          await from.store.hints.remove(target, h.key, h.record);
        }
      }
    }
  };

  /** Anti-entropy of one key among its replicas: each holds the union after; each confirms as of when it started. */
  const repair = async (key: string): Promise<void> => {
    const started = t;
    const reps = replicas(key);
    for (let round = 0; round < 2; round++)
      for (const from of reps) {
        const rec = await from.store.getRecord(key);
        if (rec) for (const into of reps) if (into !== from) await into.store.merge(key, rec);
      }
    for (const r of reps) {
      const m = confirmed.get(r.id) ?? new Map<string, number>();
      m.set(key, started);
      confirmed.set(r.id, m);
    }
  };

  const change = async (join: boolean): Promise<void> => {
    const before = new Map(keys.map((k) => [k, replicas(k)]));
    let leaver: Node | undefined;
    if (join) members = [...members, member((await addNode()).id)];
    else {
      leaver = pick([...nodes.values()]);
      members = members.filter((m) => m.id !== leaver!.id);
    }
    ring = Ring.build(members);
    for (const key of keys) {
      const was = before.get(key)!,
        is = replicas(key);
      if (was.map((n) => n.id).join() === is.map((n) => n.id).join()) continue;
      for (const n of nodes.values()) confirmed.get(n.id)?.delete(key); // a moved key's range is new: not confirmed yet
      for (const gainer of is.filter((n) => !was.includes(n)))
        for (const source of was) {
          const rec = await source.store.getRecord(key);
          if (rec) await gainer.store.merge(key, rec);
        }
      for (const loser of was.filter((n) => !is.includes(n) && n !== leaver)) {
        const token = tokenOf(key);
        await loser.store.ranges.delete(
          token === 0n ? { start: 0n, end: 0n } : { start: token - 1n, end: token },
          {},
          (k) => String(k) === key,
        );
      }
    }
    if (leaver) {
      nodes.delete(leaver.id);
      await deliver(leaver);
      await leaver.store.close();
    }
  };

  const op = async (): Promise<void> => {
    const x = rnd();
    const node = pick([...nodes.values()]);
    if (x < 0.45) await write();
    else if (x < 0.55) await deliver(node);
    else if (x < 0.65) await repair(pick(keys));
    else if (x < 0.75) t += Math.floor(rnd() * (GRACE / 2));
    else if (x < 0.85) {
      if (prune) await node.store.pruneClocks({}, confirmedBefore(node.id));
    } else if (x < 0.9) await node.store.purgeTombstones({}, confirmedBefore(node.id));
    else if (x < 0.93) {
      if (chance(0.5)) await node.store.close(); // clean; else the old store is abandoned: an unclean stop
      node.store = await open(node.engine);
    }
  };

  let joins = 0,
    leaves = 0;
  const size = o.nodes ?? 10;
  for (let i = 0; i < o.churn; i++) {
    for (let j = 0; j < (o.opsPerChange ?? 3); j++) await op();
    const join = nodes.size <= size - 2 ? true : nodes.size >= size + 2 ? false : chance(0.5);
    await change(join);
    if (join) joins++;
    else leaves++;
  }

  // Quiescence: every hint delivered, full repair, confirmed after the last change, the grace passed, a prune pass and a tombstone purge everywhere.
  let hintsExpired = 0;
  for (const n of nodes.values()) await deliver(n);
  for (const key of keys) await repair(key);
  t += 1;
  for (const key of keys) await repair(key);
  const entries = async (): Promise<number[]> => {
    const out: number[] = [];
    for (const key of keys)
      for (const r of replicas(key)) out.push(versionsOf(await r.store.getRecord(key)).clock.size);
    return out;
  };
  const entriesBefore = await entries();
  t += GRACE + 1;
  let pruned = 0;
  for (const n of nodes.values()) {
    if (prune) pruned += (await n.store.pruneClocks({}, confirmedBefore(n.id))).pruned;
    await n.store.purgeTombstones({}, confirmedBefore(n.id)); // a deleted key's clock goes with it
  }
  for (const key of keys) await repair(key);
  const entriesAfter = await entries();
  for (const n of nodes.values()) hintsExpired += n.store.hints.stats().expired;

  // The oracle: every replica holds exactly the writes no other write's read saw (deletes aside: purges drop tombstones).
  const lost: string[] = [],
    resurrected: string[] = [],
    diverged: string[] = [];
  const deletes = new Set(tombIds.values());
  const byKey = new Map<string, Set<string>>();
  for (const key of keys) {
    const records = await Promise.all(replicas(key).map((r) => r.store.getRecord(key)));
    const first = records[0];
    if (
      !records.every(
        (rec) => (rec === undefined) === (first === undefined) && (rec === undefined || versionsEqual(rec, first!)),
      )
    )
      diverged.push(key);
    byKey.set(key, new Set(idsOf(key, first)));
  }
  const held = new Set([...byKey.values()].flatMap((s) => [...s]));
  for (const id of written) {
    if (deletes.has(id)) continue;
    if (!superseded.has(id) && !held.has(id)) lost.push(id);
    if (superseded.has(id) && held.has(id)) resurrected.push(id);
  }
  for (const n of nodes.values()) await n.store.close();
  return {
    lost,
    resurrected,
    dotsIssuedTwice,
    diverged,
    entriesBefore,
    entriesAfter,
    writes: written.length,
    joins,
    leaves,
    pruned,
    hintsExpired,
  };
}

/** The same versions, to the byte (what repair compares). */
function versionsEqual(a: Buffer, b: Buffer): boolean {
  return versionBytes(a).equals(versionBytes(b));
}

const versionsOf = (record: Buffer | undefined): Versions =>
  record === undefined ? EMPTY_VERSIONS : decodeRecord(record).versions;

/** Max, 99th percentile and mean of a list of counts. */
export function summary(xs: readonly number[]): { max: number; p99: number; mean: number } {
  const s = [...xs].sort((a, b) => a - b);
  return {
    max: s[s.length - 1] ?? 0,
    p99: s[Math.min(s.length - 1, Math.floor(s.length * 0.99))] ?? 0,
    mean: s.reduce((a, b) => a + b, 0) / Math.max(1, s.length),
  };
}
