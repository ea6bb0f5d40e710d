/**
 * The receiving side of range streaming: pull the token ranges this node gains in a
 * movement from their sources, merge every record with the causal merge (so a batch sent
 * twice, or racing a write, is harmless), and keep per-range progress (checkpoints.ts)
 * so that a stream cut by a crash of either end resumes without sending finished ranges
 * again.
 *
 * Bounded: `concurrency` ranges at a time (default 4; Riak's transfer_limit is 2), one
 * batch of a range in memory at a time (gRPC flow control holds the sender back
 * meanwhile). Each batch is merged with one Store.ingest (a new key's record is copied
 * without being decoded; a key this node may hold is merged). Four, not two: a join has
 * ~200 ranges of a few thousand keys each, and with two the receiver sits idle while it
 * waits for the next range's first batch (docs/benchmarks.md#the-receivers-settings).
 * The senders' byte throttle, not this, bounds what streams cost them. A range
 * whose source fails is retried from the next source that is up, with a back-off; after
 * `attempts` rounds over its sources the pull fails, and the caller (the movement's
 * driver) tries again later.
 *
 * Owns: the pulls and their progress figures (for `ringkv transfers`). Must not: choose
 * what moves (transfer-plan.ts) or speak gRPC (transport/handoff-wire.ts does).
 */
import type { TokenRange } from '../storage/index.js';
import type { Checkpoints } from './checkpoints.js';
import { pullSources, transferShare } from '../cluster/transfer-plan.js';
import { tokenHex } from '../ring/index.js';

export interface RangeBatchIn {
  readonly entries: readonly { readonly key: Buffer; readonly record: Buffer }[];
  /** Records the source skipped as corrupt. */
  readonly corrupt: number;
}

/** Where ranges come from: node `source` streams `range` after user key `after`, the keys of `cls.n` (every key when unset). */
export interface RangeSourceApi {
  stream(
    source: string,
    range: TokenRange,
    after: Buffer | undefined,
    signal: AbortSignal,
    cls?: { readonly n?: number; readonly classes?: readonly number[] },
  ): AsyncIterable<RangeBatchIn>;
}

export interface PullItem {
  readonly start: bigint;
  readonly end: bigint;
  /** Nodes that hold the range, best first (transfer-plan.ts): the leaver, then the replicas that keep it. */
  readonly sources: readonly string[];
  /**
   * The first source is gone for good (a removal, a replacement): pull from the others at
   * once. Otherwise a leaver that is down may only be unreachable, and is waited for
   * (`leaverWaitMs`) before the range is pulled from the others.
   */
  readonly leaverGone?: boolean;
  /** The N class pulled (cluster/n-classes.ts): only keys whose bucket's n is this; unset: every key. */
  readonly n?: number;
  /** The N classes the plan was made for: the source refuses when its own differ. */
  readonly classes?: readonly number[];
}

export type RangeState = 'waiting' | 'active' | 'done' | 'failed';

export interface RangeProgress {
  readonly start: string;
  readonly end: string;
  state: RangeState;
  /** The source streaming it now (or last). */
  source: string;
  /** True when that source is not the first choice (the replica leaving the range was down). */
  fallbackSource: boolean;
  keys: number;
  /** Of `keys`, those new here, stored without a decode (Store.ingest). */
  copied: number;
  bytes: number;
  corrupt: number;
  error: string;
  /** Fraction of the token space. */
  readonly share: number;
}

export interface PullStatus {
  readonly move: string;
  readonly from: string;
  readonly startedAt: number;
  finishedAt: number | undefined;
  readonly ranges: RangeProgress[];
}

export interface TransfersDeps {
  /** Store.ingest: one batch's records merged in one pass (locks, one read, one write); how many were copied, how many merged. */
  readonly store: {
    ingest(
      entries: readonly { readonly key: Buffer; readonly record: Buffer }[],
    ): Promise<{ copied: number; merged: number }>;
  };
  readonly checkpoints: Checkpoints;
  readonly source: RangeSourceApi;
  isUp(id: string): boolean;
  readonly log: {
    info(o: object, m: string): void;
    warn(o: object, m: string): void;
    debug(o: object, m: string): void;
  };
  /** Ranges pulled at once (default 4). */
  readonly concurrency?: number;
  /** Rounds over a range's sources before the pull fails (default 3). */
  readonly attempts?: number;
  readonly retryMs?: number;
  /** How long a range waits for a leaver that is down but not gone, ms (default 60 s). */
  readonly leaverWaitMs?: number;
  readonly now?: () => number;
}

/** What a pull merged: keys and bytes, and of the keys those copied without a decode. */
export interface PullResult {
  readonly keys: number;
  readonly bytes: number;
  readonly copied: number;
}

/** Pulls finished or failed that `status()` still lists. */
const KEEP_FINISHED = 8;

export class Transfers {
  readonly #pulls: PullStatus[] = [];
  readonly #now: () => number;

  constructor(private readonly deps: TransfersDeps) {
    this.#now = deps.now ?? Date.now;
  }

  /** Pulls in progress and the last few finished, newest last. */
  status(): readonly PullStatus[] {
    return this.#pulls;
  }

  /**
   * Pull `items` for movement `move` (asked by `from`, for the log); resolves with the keys
   * and bytes merged (and of the keys, those copied without a decode) once every range is
   * in, rejects when one could not be pulled.
   */
  pull(move: string, from: string, items: readonly PullItem[], signal?: AbortSignal): Promise<PullResult> {
    // A driver that retries while its first call still runs joins it rather than doubling the streams.
    const running = this.#running.get(move);
    if (running !== undefined) return running;
    const p = this.#pull(move, from, items, signal).finally(() => this.#running.delete(move));
    this.#running.set(move, p);
    return p;
  }

  readonly #running = new Map<string, Promise<PullResult>>();
  /** When each range (move/range) first found its leaver down. */
  readonly #leaverDown = new Map<string, number>();

  async #pull(move: string, from: string, items: readonly PullItem[], signal?: AbortSignal): Promise<PullResult> {
    const status: PullStatus = {
      move,
      from,
      startedAt: this.#now(),
      finishedAt: undefined,
      ranges: items.map((i) => ({
        start: tokenHex(i.start),
        end: tokenHex(i.end),
        state: 'waiting',
        source: '',
        fallbackSource: false,
        keys: 0,
        copied: 0,
        bytes: 0,
        corrupt: 0,
        error: '',
        share: transferShare(i),
      })),
    };
    this.#pulls.push(status);
    const finished = this.#pulls.filter((p) => p.finishedAt !== undefined);
    if (finished.length > KEEP_FINISHED) this.#pulls.splice(this.#pulls.indexOf(finished[0]!), 1);
    let next = 0;
    let failure: unknown;
    const worker = async (): Promise<void> => {
      // A range that fails (its sources are down) does not hold the others back: every
      // range gets its try, and the pull fails at the end with the first failure.
      while (next < items.length && !signal?.aborted) {
        const i = next++;
        try {
          await this.#pullRange(move, items[i]!, status.ranges[i]!, signal);
        } catch (e) {
          failure ??= e;
        }
      }
    };
    try {
      await Promise.all(Array.from({ length: Math.min(this.deps.concurrency ?? 4, items.length) }, worker));
      if (signal?.aborted) throw new Error('the transfer was cancelled');
      if (failure !== undefined) throw failure;
      const keys = status.ranges.reduce((s, r) => s + r.keys, 0);
      const bytes = status.ranges.reduce((s, r) => s + r.bytes, 0);
      const copied = status.ranges.reduce((s, r) => s + r.copied, 0);
      return { keys, bytes, copied };
    } finally {
      status.finishedAt = this.#now();
      await this.deps.checkpoints.flush().catch(() => undefined);
    }
  }

  async #pullRange(move: string, item: PullItem, p: RangeProgress, signal: AbortSignal | undefined): Promise<void> {
    const key = rangeKey(item);
    const range = { start: item.start, end: item.end };
    if (this.deps.checkpoints.isDone(move, key)) {
      p.state = 'done';
      return;
    }
    const attempts = this.deps.attempts ?? 3;
    let lastError: unknown;
    for (let round = 0; round < attempts; round++) {
      const first = item.sources[0]!;
      // From the leaver, or every replica that keeps the range, each stream resuming
      // separately; a leaver only unreachable is waited for first (transfer-plan.ts).
      const since = this.#leaverDown.get(`${move}/${key}`);
      const leaverUp = this.deps.isUp(first);
      if (!leaverUp && since === undefined) this.#leaverDown.set(`${move}/${key}`, this.#now());
      const waited = leaverUp ? 0 : this.#now() - (since ?? this.#now());
      const plan = pullSources(item, leaverUp, waited, this.deps.leaverWaitMs ?? 60_000);
      if (plan.length === 0)
        lastError ??= new Error(
          `waiting for ${first}, the replica leaving this range, to be up (${Math.round(waited / 1000)} s so far)`,
        );
      if (plan.length === 1 && plan[0]!.length === 0) {
        // The range's only copies were on a node gone for good (n=1): nothing is left to pull.
        this.deps.log.warn(
          { range: key, peer: first },
          'the only replica of this range is gone for good: its keys are lost, nothing to pull',
        );
        this.#save(this.deps.checkpoints.complete(move, key));
        p.state = 'done';
        return;
      }
      for (const sources of plan) {
        if (signal?.aborted) return;
        if (sources.length === 0 || !sources.every((x) => this.deps.isUp(x))) continue;
        p.state = 'active';
        p.source = sources.join('+');
        p.fallbackSource = sources[0] !== first;
        if (p.fallbackSource)
          this.deps.log.warn(
            { range: key, peers: sources, preferred: first },
            'the replica leaving this range is down: pulling it from every replica that keeps it',
          );
        try {
          for (const source of sources) await this.#stream(move, `${key}<${source}`, range, source, item, p, signal);
          // Done in memory at once (isDone); the file is written in the background, one
          // write for the ranges that finish meanwhile, and the pull waits for it before it
          // resolves. Waiting here would serialise an fsync per range across the workers: a
          // large share of a join's streaming time (docs/benchmarks.md#the-receivers-settings).
          // A range whose mark a crash loses is pulled again, which merges nothing new.
          this.#save(this.deps.checkpoints.complete(move, key));
          p.state = 'done';
          p.error = '';
          return;
        } catch (e) {
          lastError = e;
          p.error = describe(e);
          this.deps.log.warn(
            { range: key, peers: sources, err: p.error },
            'range stream failed; trying the next source',
          );
        }
      }
      if (round + 1 < attempts) await new Promise((r) => setTimeout(r, this.deps.retryMs ?? 1000));
    }
    p.state = 'failed';
    throw new Error(
      `range (${p.start}, ${p.end}] could not be pulled from ${item.sources.join(', ')}: ${lastError === undefined ? 'no source is up' : describe(lastError)}`,
    );
  }

  /** A checkpoint write in the background: progress is an optimisation, so a failure is logged, not fatal. */
  #save(write: Promise<void>): void {
    write.catch((e: unknown) =>
      this.deps.log.warn({ err: describe(e) }, 'transfer progress not saved; a restart pulls those ranges again'),
    );
  }

  async #stream(
    move: string,
    key: string,
    range: TokenRange,
    source: string,
    cls: Pick<PullItem, 'n' | 'classes'>,
    p: RangeProgress,
    signal: AbortSignal | undefined,
  ): Promise<void> {
    const after = this.deps.checkpoints.resumeAfter(move, key);
    const local = new AbortController();
    const onAbort = (): void => local.abort();
    signal?.addEventListener('abort', onAbort);
    try {
      for await (const batch of this.deps.source.stream(source, range, after, local.signal, cls)) {
        if (batch.entries.length > 0) {
          const { copied } = await this.deps.store.ingest(batch.entries);
          p.keys += batch.entries.length;
          p.copied += copied;
          for (const e of batch.entries) p.bytes += e.key.length + e.record.length;
          this.#save(this.deps.checkpoints.progress(move, key, batch.entries[batch.entries.length - 1]!.key));
        }
        p.corrupt += batch.corrupt;
      }
    } finally {
      signal?.removeEventListener('abort', onAbort);
      local.abort();
    }
  }
}

/** The checkpoint key of a range: its bounds in hex, and its N class when it has one (`/n5`). */
export function rangeKey(r: { readonly start: bigint; readonly end: bigint; readonly n?: number }): string {
  return `${tokenHex(r.start)}-${tokenHex(r.end)}${r.n === undefined ? '' : `/n${r.n}`}`;
}

function describe(e: unknown): string {
  const x = e as { details?: string; message?: string };
  return (x?.details ?? x?.message ?? String(e)).replace(/\. Resolution note: .*$/, '');
}
