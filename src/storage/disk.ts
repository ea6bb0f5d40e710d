/**
 * The disk under a store: how much of it is free, the floor below which the store takes
 * no new writes, and whether a write failed for want of space. LevelDB keeps the first
 * error of its background work (a compaction or a memtable flush that hit ENOSPC) and
 * fails every later write with it, even once space is back, until the database is opened
 * again; `recoverable` says when that is worth doing.
 *
 *   low     free < floor: new writes are refused (KV_DISK_FULL) before LevelDB fills the
 *           disk, so that its own work (compactions, which free space) has room;
 *   failed  a write failed with ENOSPC: refused too, until the store reopens its engine,
 *           which it does once free ≥ floor and free has grown since the failure.
 *
 * Owns: the free-space figures, the floor, the two conditions and the refusal's message.
 * Must not: decide what a refusal covers (the store does) or reopen anything.
 */
import { statfs } from 'node:fs/promises';
import { KvError } from '../kinds/kv-errors.js';

export interface DiskSpace {
  /** Bytes an unprivileged writer can still use (statfs bavail × bsize). */
  readonly free: number;
  readonly total: number;
}

/** The free and total bytes of the filesystem holding `path`. */
export type StatFs = (path: string) => Promise<DiskSpace>;

export const nodeStatfs: StatFs = async (path) => {
  const s = await statfs(path);
  return { free: s.bavail * s.bsize, total: s.blocks * s.bsize };
};

/** The default floor: this share of the filesystem, at most MAX_DEFAULT_FLOOR_BYTES. */
export const DEFAULT_FLOOR_SHARE = 0.05;
export const MAX_DEFAULT_FLOOR_BYTES = 1 << 30;
/**
 * How much free space must have come back since a write failed before the engine is opened
 * again: a reopen replays LevelDB's log into a table, which needs room, and a floor of 0
 * must not make the store reopen into the same full disk over and over.
 */
export const RECOVER_MARGIN_BYTES = 8 << 20;

export interface DiskState {
  readonly freeBytes: number;
  readonly totalBytes: number;
  readonly floorBytes: number;
  /** Free space below the floor: new writes are refused. */
  readonly low: boolean;
  /** A write failed for want of space and the engine was not opened again since. */
  readonly failed: boolean;
  /** Times the engine was opened again after a failure, since the store opened. */
  readonly reopens: number;
}

const mib = (bytes: number): string => `${(bytes / (1 << 20)).toFixed(bytes < 10 << 20 ? 1 : 0)} MiB`;

/** True when `e` (or an error it was caused by) is the OS's "no space left on device". */
export function isNoSpace(e: unknown): boolean {
  for (let x = e, depth = 0; x instanceof Error && depth < 5; x = x.cause, depth++) {
    if ((x as NodeJS.ErrnoException).code === 'ENOSPC' || /No space left on device/.test(x.message)) return true;
  }
  return false;
}

export class DiskGuard {
  #space: DiskSpace | undefined;
  /** The least free bytes seen since a write failed for want of space; undefined when none did since the engine opened. */
  #failedAt: number | undefined;
  #reopens = 0;

  /**
   * @param floorBytes the floor; undefined: DEFAULT_FLOOR_SHARE of the filesystem, at most MAX_DEFAULT_FLOOR_BYTES.
   * @param label the node's name, for messages.
   */
  constructor(
    readonly path: string,
    readonly floorBytes: number | undefined,
    readonly label: string | undefined,
    private readonly statfs: StatFs = nodeStatfs,
  ) {
    if (floorBytes !== undefined && !(Number.isSafeInteger(floorBytes) && floorBytes >= 0))
      throw new KvError(
        'KV_BAD_OPTION',
        `the free-disk floor must be a whole number of bytes ≥ 0, got ${String(floorBytes)}`,
      );
  }

  /** Read the filesystem's free space now. */
  async check(): Promise<DiskState> {
    this.#space = await this.statfs(this.path);
    if (this.#failedAt !== undefined) this.#failedAt = Math.min(this.#failedAt, this.#space.free);
    return this.state;
  }

  get state(): DiskState {
    const free = this.#space?.free ?? Infinity,
      total = this.#space?.total ?? 0;
    const floor = this.#floor();
    return {
      freeBytes: this.#space?.free ?? 0,
      totalBytes: total,
      floorBytes: floor,
      low: free < floor,
      failed: this.#failedAt !== undefined,
      reopens: this.#reopens,
    };
  }

  #floor(): number {
    return (
      this.floorBytes ?? Math.min(MAX_DEFAULT_FLOOR_BYTES, Math.floor((this.#space?.total ?? 0) * DEFAULT_FLOOR_SHARE))
    );
  }

  /** Note an engine failure: true (and the store is `failed` from now on) when it was for want of space. */
  noteFailure(e: unknown): boolean {
    if (!isNoSpace(e)) return false;
    this.#failedAt ??= this.#space?.free ?? 0;
    return true;
  }

  /** Worth opening the engine again: a write failed for want of space, and space is back (above the floor, and grown since the least seen). */
  recoverable(): boolean {
    const s = this.#space;
    return (
      this.#failedAt !== undefined &&
      s !== undefined &&
      s.free >= this.#floor() &&
      s.free >= this.#failedAt + RECOVER_MARGIN_BYTES
    );
  }

  /** The engine was opened again: writes may go on. */
  recovered(): void {
    this.#failedAt = undefined;
    this.#reopens++;
  }

  /** KV_DISK_FULL for a new write while free space is below the floor or the engine failed for want of it; undefined otherwise. */
  refusal(): KvError | undefined {
    const s = this.state;
    if (!s.low && !s.failed) return undefined;
    const where = this.label === undefined ? 'this node' : this.label;
    const what = s.failed
      ? `a write on ${where} failed for want of disk space (${mib(s.freeBytes)} free of ${mib(s.totalBytes)} when last measured), and its store takes no writes until space is back above the floor of ${mib(s.floorBytes)} and it reopens`
      : `disk nearly full on ${where}: ${mib(s.freeBytes)} free of ${mib(s.totalBytes)}, below the floor of ${mib(s.floorBytes)} (--min-free-disk)`;
    return new KvError(
      'KV_DISK_FULL',
      `${what}; nothing was written here. Free space on that disk (or grow it); meanwhile other replicas take the write`,
    );
  }
}
