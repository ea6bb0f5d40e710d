/**
 * Progress of the ranges a node pulls, kept in its data dir (transfers.json), so that a
 * stream cut by a crash of either end resumes where it stopped and finished ranges are
 * not pulled again. Kept per movement id: a range pulled for an earlier attempt (a
 * cancelled decommission, a withdrawn claim) missed the writes made since, so it counts
 * for nothing in a new one.
 *
 * Owns: the file (written atomically, at most every `flushMs` while ranges run, and at
 * once when a range completes). Must not: decide what to pull (transfers.ts does).
 */
import { mkdir, open, readFile, rename } from 'node:fs/promises';
import { dirname } from 'node:path';

interface MoveProgress {
  done: string[];
  /** range key → base64 of the last user key merged. */
  partial: Record<string, string>;
}

/** Movements remembered; older ones are forgotten (they can no longer resume). */
const KEEP_MOVES = 4;

export class Checkpoints {
  #moves: Record<string, MoveProgress> = {};
  #order: string[] = [];
  #dirty = false;
  #writing: Promise<void> = Promise.resolve();
  #lastFlush = 0;

  private constructor(
    private readonly path: string,
    private readonly flushMs: number,
  ) {}

  /** Load the file at `path` (missing or damaged: start empty; progress is only an optimisation). */
  static async open(path: string, flushMs = 1000): Promise<Checkpoints> {
    const c = new Checkpoints(path, flushMs);
    try {
      const j = JSON.parse(await readFile(path, 'utf8')) as { order?: unknown; moves?: unknown };
      if (Array.isArray(j.order) && j.moves !== null && typeof j.moves === 'object') {
        for (const id of j.order) {
          const m = (j.moves as Record<string, MoveProgress>)[id as string];
          if (typeof id === 'string' && m && Array.isArray(m.done) && m.partial && typeof m.partial === 'object') {
            c.#order.push(id);
            c.#moves[id] = { done: m.done.filter((d) => typeof d === 'string'), partial: { ...m.partial } };
          }
        }
      }
    } catch {
      /* no progress kept yet */
    }
    return c;
  }

  #move(id: string): MoveProgress {
    let m = this.#moves[id];
    if (m === undefined) {
      m = this.#moves[id] = { done: [], partial: {} };
      this.#order.push(id);
      while (this.#order.length > KEEP_MOVES) delete this.#moves[this.#order.shift()!];
    }
    return m;
  }

  isDone(move: string, range: string): boolean {
    return this.#moves[move]?.done.includes(range) ?? false;
  }

  /** The last user key merged for a range that was cut short, if any. */
  resumeAfter(move: string, range: string): Buffer | undefined {
    const b = this.#moves[move]?.partial[range];
    return b === undefined ? undefined : Buffer.from(b, 'base64');
  }

  /** Record progress: the last key merged; written within `flushMs`. */
  progress(move: string, range: string, lastKey: Uint8Array): Promise<void> {
    this.#move(move).partial[range] = Buffer.from(lastKey).toString('base64');
    this.#dirty = true;
    return performance.now() - this.#lastFlush >= this.flushMs ? this.flush() : Promise.resolve();
  }

  /** Record a finished range; written before this resolves. */
  complete(move: string, range: string): Promise<void> {
    const m = this.#move(move);
    // The range's own progress and its per-source progress (`range<source`).
    for (const k of Object.keys(m.partial)) if (k === range || k.startsWith(`${range}<`)) delete m.partial[k];
    if (!m.done.includes(range)) m.done.push(range);
    this.#dirty = true;
    return this.flush();
  }

  /** Write the file if anything changed (temp file, fsync, rename). */
  flush(): Promise<void> {
    this.#writing = this.#writing
      .catch(() => undefined)
      .then(async () => {
        if (!this.#dirty) return;
        this.#dirty = false;
        this.#lastFlush = performance.now();
        const body = JSON.stringify({ order: this.#order, moves: this.#moves });
        await mkdir(dirname(this.path), { recursive: true });
        const tmp = `${this.path}.tmp`;
        const f = await open(tmp, 'w');
        try {
          await f.writeFile(body);
          await f.sync();
        } finally {
          await f.close();
        }
        await rename(tmp, this.path);
      });
    return this.#writing;
  }
}
