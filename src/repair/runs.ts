/**
 * Repairs this node runs: every token range it replicates (or those asked for), one after
 * another, each compared with all its other replicas (repair/exchange.ts over the Repair
 * service). A range with a replica down is skipped and reported: a repair needs every
 * replica, since it is what later lets tombstones go.
 *
 * Buckets of different n: a range's replicas differ per n, so a range is repaired once per
 * N class in use, each time over that class's keys only and with that class's replicas
 * (an n=1 key is never compared with, so never copied to, a second node). With one class
 * a range is repaired over every key, as before buckets.
 *
 * Owns: the run, its progress and summary, and when each range was last repaired here.
 * Must not: decide what differs (repair/exchange.ts) or talk gRPC itself (transport/).
 */
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { tokenHex, unitKey, type RangeUnit, type Ring } from '../ring/index.js';
import { depthFor, type KeyFilter, type RangeTree, type Store } from '../storage/index.js';
import type { TokenRange } from '../storage/keys.js';
import { NotKept, repairRange, type RepairPeers, type RepairStats } from './exchange.js';
import { storeSide } from './store-side.js';

/** Trees are at least this deep (256 leaves): a range LevelDB has not yet sized still splits. */
const MIN_DEPTH = 2;

export interface RepairRunDeps {
  readonly id: string;
  readonly store: Store;
  /** The N classes in use, ascending (the bucket table's distinct n; the cluster's N among them). */
  classes(): readonly number[];
  /** The keys of class `n` (0: every key), as this node's tree of a range takes them; throws when it cannot tell now. */
  only(n: number): KeyFilter;
  ring(): Ring | undefined;
  isUp(id: string): boolean;
  readonly wire: RepairPeers;
  readonly timeoutMs: number;
  now(): number;
  readonly log: Logger;
}

export interface RepairProgress extends RepairStats {
  readonly id: string;
  readonly startedAtMs: number;
  finishedAtMs: number;
  /** Ranges to repair, repaired, skipped (a replica down) and failed. */
  readonly ranges: number;
  done: number;
  skipped: number;
  failed: number;
  /** Ranges compared and found identical (no leaf differed): in sync. */
  identical: number;
  /** Ranges compared on trees kept on write (no scan). */
  kept: number;
  /** Records this node read from storage during the run (tree scans, leaf listings). */
  recordsRead: number;
  /** The range being repaired now, "start-end" in hex. */
  current: string;
  /** Why the last skipped or failed range was. */
  lastProblem: string;
}

/** A range as repaired: its replicas for N class `n` (ring/tokens.ts). */
export type RepairUnit = RangeUnit;
export { unitKey };

/**
 * The ranges `self` replicates, once per N class in `classes` (ascending), with that
 * class's replicas: what a full repair goes over. One class: its ranges, as one N's.
 */
export function repairUnits(ring: Ring | undefined, self: string, classes: readonly number[]): RepairUnit[] {
  if (ring === undefined || !ring.has(self)) return [];
  return classes.flatMap((n) =>
    ring
      .ranges(Math.min(n, ring.size))
      .filter((r) => r.replicas.includes(self))
      .map((r): RepairUnit => ({
        start: r.start,
        end: r.end,
        replicas: r.replicas,
        ...(classes.length > 1 ? { n } : {}),
      })),
  );
}

export class RepairRefused extends Error {
  override readonly name = 'RepairRefused';
  readonly code = 'OP_REPAIR_REFUSED';
}

export class RepairRuns {
  #current: RepairProgress | undefined;
  #running: Promise<void> | undefined;
  /** When each range ("start-end" in hex, "/nN" for a class) was last repaired with every replica, on this node's clock: as repairer or as a peer. */
  readonly lastRepaired = new Map<string, number>();

  constructor(private readonly deps: RepairRunDeps) {}

  /** The run in progress (or the last one), and when each range this node replicates was last repaired. */
  get status(): Partial<RepairProgress> & {
    repaired: { start: string; end: string; atMs: number }[];
    background: { ranges: number; keysExchanged: number; bytes: number; failed: number };
  } {
    const mine = repairUnits(this.deps.ring(), this.deps.id, this.deps.classes());
    const repaired = mine.map((r) => ({
      start: tokenHex(r.start),
      end: tokenHex(r.end),
      atMs: this.lastRepaired.get(unitKey(r)) ?? 0,
    }));
    return { ...this.#current, repaired, background: { ...this.background } };
  }

  /**
   * Start repairing the ranges this node replicates; with `only`, those of them that
   * overlap it. Refused while a run is going on or before the node owns ranges.
   */
  start(only?: TokenRange): RepairProgress {
    if (this.#running !== undefined)
      throw new RepairRefused(
        `repair ${this.#current!.id} is still running (${this.#current!.done} of ${this.#current!.ranges} ranges); wait for it (ringkv repair --status)`,
      );
    const ring = this.deps.ring();
    if (ring === undefined || !ring.has(this.deps.id))
      throw new RepairRefused(`${this.deps.id} owns no ranges yet: nothing to repair`);
    const ranges = repairUnits(ring, this.deps.id, this.deps.classes()).filter(
      (r) => only === undefined || overlaps(r, only),
    );
    const progress: RepairProgress = {
      id: randomBytes(6).toString('hex'),
      startedAtMs: this.deps.now(),
      finishedAtMs: 0,
      ranges: ranges.length,
      done: 0,
      skipped: 0,
      failed: 0,
      identical: 0,
      kept: 0,
      recordsRead: 0,
      current: '',
      lastProblem: '',
      leavesDiffering: 0,
      keysExchanged: 0,
      bytes: 0,
      recordBytes: 0,
    };
    this.#current = progress;
    this.deps.log.info({ repair: progress.id, ranges: ranges.length }, 'repair started');
    this.#running = this.#run(progress, ranges).finally(() => {
      progress.finishedAtMs = this.deps.now();
      progress.current = '';
      this.#running = undefined;
      const { done, skipped, failed, identical, leavesDiffering, keysExchanged, bytes } = progress;
      this.deps.log.info(
        {
          repair: progress.id,
          done,
          skipped,
          failed,
          identical,
          leavesDiffering,
          keysExchanged,
          bytes,
          ms: progress.finishedAtMs - progress.startedAtMs,
        },
        'repair finished',
      );
    });
    return progress;
  }

  async #run(p: RepairProgress, ranges: readonly RepairUnit[]): Promise<void> {
    const read0 = this.deps.store.ranges.recordsRead;
    for (const r of ranges) {
      p.recordsRead = this.deps.store.ranges.recordsRead - read0;
      const range = { start: r.start, end: r.end };
      p.current = unitKey(r);
      const peers = r.replicas.filter((x) => x !== this.deps.id);
      const down = peers.filter((x) => !this.deps.isUp(x));
      if (down.length > 0) {
        p.skipped++;
        p.lastProblem = `range ${p.current} skipped: ${down.join(', ')} down`;
        continue;
      }
      try {
        const stats = await this.repairOne(range, peers, r.n);
        p.leavesDiffering += stats.leavesDiffering;
        p.keysExchanged += stats.keysExchanged;
        p.bytes += stats.bytes;
        p.recordBytes += stats.recordBytes;
        if (stats.leavesDiffering === 0) p.identical++;
        if (stats.kept === true) p.kept++;
        p.done++;
      } catch (e) {
        p.failed++;
        p.lastProblem = `range ${p.current}: ${(e as { details?: string; message?: string })?.details ?? (e as Error)?.message ?? String(e)}`;
        this.deps.log.warn(
          { range: p.current, err: p.lastProblem },
          'repair of a range failed; the next run tries again',
        );
      }
    }
    p.recordsRead = this.deps.store.ranges.recordsRead - read0;
  }

  /**
   * Tell the store which units to keep trees for: every range this node replicates in
   * the current ring, per N class (0: every key, one class in use). Nothing before this
   * node has a ring: the trees loaded from disk stay until it does.
   */
  trackKept(): void {
    const trees = this.deps.store.trees,
      ring = this.deps.ring();
    if (trees === undefined || ring === undefined || !ring.has(this.deps.id)) return;
    const units = repairUnits(ring, this.deps.id, this.deps.classes()).map((r) => ({
      n: r.n ?? 0,
      start: r.start,
      end: r.end,
    }));
    trees
      .track(units)
      .catch((e: unknown) =>
        this.deps.log.warn(
          { err: (e as Error).message },
          'kept trees: tracking the ranges this node replicates failed; tried again at the next change',
        ),
      );
  }

  /** Range (start, end] (of N class `n`; undefined: every key) was repaired with every replica as of `at` (this node's clock). */
  record(range: TokenRange, at: number, n?: number): void {
    const key = unitKey({ ...range, n });
    this.lastRepaired.set(key, Math.max(at, this.lastRepaired.get(key) ?? 0));
  }

  /**
   * As of when (this node's clock) a repair confirmed that every replica of the current
   * range holding `token` holds what this node held; 0 when none did since this node
   * started (or since the ring changed: new ranges have not been repaired). With several
   * N classes, the earliest over the classes this node replicates the range for: a
   * tombstone's class is not known here, so every one must have been confirmed.
   */
  confirmedBefore(token: bigint): number {
    const ring = this.deps.ring();
    if (ring === undefined) return 0;
    const range = ring.rangeOf(token);
    const classes = this.deps.classes();
    if (classes.length <= 1) return this.lastRepaired.get(unitKey(range)) ?? 0;
    let at: number | undefined;
    for (const n of classes) {
      if (!ring.replicasForToken(token, Math.min(n, ring.size)).includes(this.deps.id)) continue;
      const t = this.lastRepaired.get(unitKey({ ...range, n })) ?? 0;
      at = at === undefined ? t : Math.min(at, t);
    }
    return at ?? 0;
  }

  /** What background repair has done since this node started. */
  readonly background = { ranges: 0, keysExchanged: 0, bytes: 0, failed: 0 };

  /**
   * Background repair, until `signal` aborts: each range this node is the first replica
   * of is repaired once every `intervalMs` (counted from this node's start for a range
   * not repaired since), one range at a time, and never while a run of `start` or a
   * topology change is going on (`quiet`). Paced to about `bytesPerSecond` of data read
   * (each replica reads the range once), times the governor's `share`.
   */
  async runBackground(o: {
    intervalMs: number;
    bytesPerSecond: number;
    share(): number;
    quiet(): boolean;
    signal: AbortSignal;
    pollMs?: number;
  }): Promise<void> {
    const startedAt = this.deps.now();
    const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms).unref?.());
    while (!o.signal.aborted) {
      const next = this.#running === undefined && o.quiet() ? this.#due(o.intervalMs, startedAt) : undefined;
      if (next === undefined) {
        await sleep(o.pollMs ?? 1000);
        continue;
      }
      const t0 = this.deps.now();
      let kept: number | undefined;
      try {
        const stats = await this.repairOne(next.range, next.peers, next.n);
        if (stats.kept) kept = stats.bytes;
        this.background.ranges++;
        this.background.keysExchanged += stats.keysExchanged;
        this.background.bytes += stats.bytes;
      } catch (e) {
        this.background.failed++;
        this.deps.log.warn(
          {
            range: `${tokenHex(next.range.start)}-${tokenHex(next.range.end)}`,
            err: (e as { details?: string; message?: string })?.details ?? (e as Error)?.message,
          },
          'background repair of a range failed; it is tried again later',
        );
      }
      // Pace: what the repair read over the allowed rate, less the time it took. On kept trees that is what
      // the exchange moved (the differing leaves' keys and records; an in-sync range read none); by scans, the
      // range's data, which every side read whole.
      const bytes = kept ?? (await this.deps.store.ranges.approximateBytes(next.range).catch(() => 0));
      const wait = (bytes / (o.bytesPerSecond * Math.max(0.05, o.share()))) * 1000 - (this.deps.now() - t0);
      if (wait > 0) await sleep(Math.min(wait, 60_000));
    }
  }

  /** The range (of a class) this node is first replica of that is most overdue for repair, with its peers all up. */
  #due(
    intervalMs: number,
    startedAt: number,
  ): { range: TokenRange; peers: string[]; n: number | undefined } | undefined {
    const now = this.deps.now();
    let best: { range: TokenRange; peers: string[]; n: number | undefined; last: number } | undefined;
    for (const r of repairUnits(this.deps.ring(), this.deps.id, this.deps.classes())) {
      if (r.replicas[0] !== this.deps.id) continue;
      const last = this.lastRepaired.get(unitKey(r)) ?? startedAt;
      if (now - last < intervalMs || (best !== undefined && last >= best.last)) continue;
      const peers = r.replicas.slice(1);
      if (!peers.every((p) => this.deps.isUp(p))) continue;
      best = { range: { start: r.start, end: r.end }, peers, n: r.n, last };
    }
    return best;
  }

  #active = 0;

  /** Is a range being repaired now (the governor counts it as background work)? */
  get active(): boolean {
    return this.#active > 0;
  }

  /** Repair one range (its keys of N class `n`; undefined: every key) with its other replicas `peers` (all up). */
  async repairOne(range: TokenRange, peers: readonly string[], n?: number): Promise<RepairStats & { kept?: boolean }> {
    this.#active++;
    try {
      return await this.#repairOne(range, peers, n);
    } finally {
      this.#active--;
    }
  }

  async #repairOne(
    range: TokenRange,
    peers: readonly string[],
    n: number | undefined,
  ): Promise<RepairStats & { kept?: boolean }> {
    const { store, wire } = this.deps;
    const builtAt = this.deps.now();
    // A range with one replica (n=1) has nothing to compare with: it holds what it holds.
    if (peers.length === 0) {
      this.record(range, builtAt, n);
      return { leavesDiffering: 0, keysExchanged: 0, bytes: 0, recordBytes: 0 };
    }
    // Kept trees on every side: roots compared, no scan; a peer without one: scans on every side.
    const kept = store.trees?.tree({ n: n ?? 0, ...range });
    if (kept !== undefined) {
      try {
        return { ...(await this.#exchange(range, peers, n, kept, builtAt, true)), kept: true };
      } catch (e) {
        if (!(e instanceof NotKept)) throw e;
        this.deps.log.debug(
          { range: unitKey({ ...range, n }), why: e.message },
          'repair: a peer has no kept tree of the range; comparing by scans',
        );
      }
    }
    const depth = Math.max(MIN_DEPTH, depthFor((await store.ranges.approximateBytes(range)) / 100));
    const session = randomBytes(6).toString('hex');
    const classes = this.deps.classes();
    const only = this.deps.only(n ?? 0);
    const tree = await store.ranges.tree(range, depth, only);
    return this.#exchange(range, peers, n, tree, builtAt, false, only, session);
  }

  /** Compare `tree` (this node's, kept or scanned with `only`) with every peer's in one session, and exchange what differs. */
  async #exchange(
    range: TokenRange,
    peers: readonly string[],
    n: number | undefined,
    tree: RangeTree,
    builtAt: number,
    kept: boolean,
    only = this.deps.only(n ?? 0),
    session = randomBytes(6).toString('hex'),
  ): Promise<RepairStats> {
    const classes = this.deps.classes();
    const sides = peers.map((p) =>
      this.deps.wire.side(p, session, range, tree.depth, this.deps.timeoutMs, { n: n ?? 0, classes }, kept),
    );
    let complete = false;
    try {
      const stats = await repairRange(tree, storeSide(this.deps.id, this.deps.store, tree, only), sides);
      complete = true;
      this.record(range, builtAt, n);
      return stats;
    } finally {
      await Promise.all(sides.map((s) => s.finish(complete).catch(() => undefined)));
    }
  }
}

/** Do token ranges (start, end] overlap? (start == end is the whole ring.) */
export function overlaps(a: TokenRange, b: TokenRange): boolean {
  if (a.start === a.end || b.start === b.end) return true;
  const inside = (t: bigint, r: TokenRange): boolean =>
    r.start < r.end ? t > r.start && t <= r.end : t > r.start || t <= r.end;
  return inside(a.end, b) || inside(b.end, a);
}
