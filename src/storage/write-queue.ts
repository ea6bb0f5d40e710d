/**
 * Group commit. Writes that arrive while a batch is being written wait and go together
 * in the next batch, so concurrent writers share one LevelDB write — and in sync mode,
 * one fsync. A lone writer is not held back for others: with nothing in flight its batch
 * starts at the end of the current tick, so that it takes every write queued in the same
 * burst of callbacks (the writers that one batch of reads released all come back in one
 * burst; started at once, the first of them would go alone and the rest wait for a second
 * trip). One batch in flight, rather than direct writes or several batches: LevelDB's own
 * grouping is limited to the 4 writes the libuv pool runs at once, and every trip costs
 * thread hand-offs (figures: docs/benchmarks.md#batching-inside-the-store).
 *
 * Every op on a data key ('d') is a DataOp: it carries the record bytes it replaces
 * (`prior`, null when the key was absent), and a batch goes through the `extend` hook
 * at assembly (when no batch is in flight, so what the hook keeps in memory equals what
 * is on disk): the kept trees (kept-trees.ts) add their leaf puts to the same batch and
 * apply their deltas only once it is written. A data op without `prior` is refused.
 *
 * Owns: ordering (batches are written one at a time, in arrival order), acknowledging
 * each writer only when its batch is written, and batch boundaries (`exclusive`). Must
 * not: reorder ops of one writer.
 */
import type { Engine, WriteOp } from './engine.js';
import { DATA } from './keys.js';

/**
 * A write of a data key, with the record it replaces (null: the key had none);
 * `priorIntact`: its writer decoded `prior` (so its checksum holds), which spares the
 * kept trees a second check.
 */
export type DataOp =
  | {
      readonly type: 'put';
      readonly key: Uint8Array;
      readonly value: Uint8Array;
      readonly prior: Buffer | null;
      readonly priorIntact?: boolean;
    }
  | { readonly type: 'del'; readonly key: Uint8Array; readonly prior: Buffer | null; readonly priorIntact?: boolean };

/** What the queue takes: any op; one on a data key must be a DataOp. */
export type QueueOp = WriteOp & { readonly prior?: Buffer | null; readonly priorIntact?: boolean };

/** The ops a batch's data ops add to it, and what to do once it is written. */
export interface Extension {
  readonly ops: readonly WriteOp[];
  readonly apply: () => void;
}

/** A batch hook: called at assembly with the batch's ops; undefined when it adds nothing. */
export type Extend = (ops: readonly QueueOp[]) => Extension | undefined;

interface Pending {
  readonly ops: readonly QueueOp[];
  /** An exclusive batch: its ops are computed at assembly and it is written alone. */
  readonly alone?: () => Extension | undefined;
  readonly resolve: () => void;
  readonly reject: (e: unknown) => void;
}

export class WriteQueue {
  #waiting: Pending[] = [];
  #waitingOps = 0;
  #busy = false;
  readonly #start = (): void => void this.#drain();
  /** Batches written and writes acknowledged, for tests and metrics. */
  batches = 0;
  writes = 0;
  /** Key and value bytes of the puts written whose key `counted` accepts (the store's load estimate). */
  bytesWritten = 0;

  constructor(
    private readonly engine: Engine,
    private readonly sync: boolean,
    /** Most ops in one batch; writers past it wait for the next (bounds latency and memory). */
    private readonly maxBatchOps = 2048,
    private readonly counted: (key: Uint8Array) => boolean = () => true,
  ) {}

  /** The batch hook (kept-trees.ts); set once, before the first write. */
  extend: Extend | undefined;

  write(ops: readonly QueueOp[]): Promise<void> {
    for (const op of ops)
      if (op.key[0] === DATA && op.prior === undefined)
        return Promise.reject(
          new Error(
            'a data key was written without the record it replaces (a DataOp needs prior): a bug in its writer',
          ),
        );
    return this.#enqueue(ops, undefined);
  }

  /**
   * Run `fn` at a batch boundary (no batch in flight, the next not yet assembled) and
   * write the ops it returns alone in one batch; `apply` runs once they are written
   * (with no ops, at once). How a tree build takes its snapshot and swaps its tree in.
   */
  exclusive(fn: () => Extension | undefined): Promise<void> {
    return this.#enqueue([], fn);
  }

  #enqueue(ops: readonly QueueOp[], alone: Pending['alone']): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.#waiting.push({ ops, alone, resolve, reject });
      this.#waitingOps += ops.length;
      if (!this.#busy) {
        this.#busy = true; // now: the rest of this tick's writes join this batch
        process.nextTick(this.#start);
      }
    });
  }

  async #drain(): Promise<void> {
    while (this.#waiting.length > 0) {
      const first = this.#waiting[0]!;
      if (first.alone !== undefined) {
        this.#waiting.shift();
        await this.#exclusive(first, first.alone);
        continue;
      }
      let count = 0,
        n = 0;
      while (
        n < this.#waiting.length &&
        this.#waiting[n]!.alone === undefined &&
        (n === 0 || count + this.#waiting[n]!.ops.length <= this.maxBatchOps)
      )
        count += this.#waiting[n++]!.ops.length;
      const group = this.#waiting.splice(0, n);
      this.#waitingOps -= count;
      let ops = group.length === 1 ? group[0]!.ops : group.flatMap((p) => p.ops);
      try {
        const ext = this.extend?.(ops);
        if (ext !== undefined && ext.ops.length > 0) ops = [...ops, ...ext.ops];
        await this.engine.write(ops, this.sync);
        ext?.apply(); // only now: a failed batch changes nothing in memory
        for (const op of ops)
          if (op.type === 'put' && this.counted(op.key)) this.bytesWritten += op.key.length + op.value.length;
        this.batches++;
        this.writes += group.length;
        for (const p of group) p.resolve();
      } catch (e) {
        for (const p of group) p.reject(e);
      }
    }
    this.#busy = false;
  }

  async #exclusive(p: Pending, fn: () => Extension | undefined): Promise<void> {
    try {
      const ext = fn();
      if (ext !== undefined && ext.ops.length > 0) {
        await this.engine.write(ext.ops, this.sync);
        this.batches++;
      }
      ext?.apply();
      p.resolve();
    } catch (e) {
      p.reject(e);
    }
  }

  /** Ops queued behind the batch in flight. */
  get backlog(): number {
    return this.#waitingOps;
  }
}
