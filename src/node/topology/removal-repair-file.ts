/**
 * The progress of the repair step of the removal this node drives (cluster/leave.ts's
 * `repair`), in its data dir next to node.json (`removal-repair.json`): the move id and
 * the keys of the units repaired or skipped under it, so that a restart resumes the step
 * where it was. A file of another move is stale (that removal ended or was withdrawn): it
 * counts as nothing done. Written atomically as node.json is (identity.ts's writeAtomically).
 *
 * Owns: the file and its format. Must not: decide what to repair or when the step ends.
 */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { readJsonFile, writeAtomically } from '../identity.js';

const FILE = 'removal-repair.json';

export interface RemovalRepairProgress {
  readonly move: string;
  /** Units (ring's unitKey) repaired with every replica. */
  readonly repaired: readonly string[];
  /** Units skipped because a replica was down (left to background repair). */
  readonly skipped: readonly string[];
}

/** Save `p`; undefined removes the file. */
export async function saveRemovalRepair(dir: string, p: RemovalRepairProgress | undefined): Promise<void> {
  if (p === undefined) {
    await rm(join(dir, FILE), { force: true });
    return;
  }
  await writeAtomically(dir, FILE, `${JSON.stringify(p)}\n`);
}

/** The progress saved in `dir` for `move`: none when there is no file or it is of another move; throws with what is wrong when it is damaged. */
export async function loadRemovalRepair(dir: string, move: string): Promise<RemovalRepairProgress> {
  const none = { move, repaired: [], skipped: [] };
  const bad = (): never => {
    throw new Error(
      `${join(dir, FILE)} is damaged: delete it (the removal's repair step then starts over, which is safe) and restart`,
    );
  };
  const j = (await readJsonFile(dir, FILE, bad)) as
    { move?: unknown; repaired?: unknown; skipped?: unknown } | undefined;
  if (j === undefined) return none;
  const strings = (v: unknown): v is string[] => Array.isArray(v) && v.every((x) => typeof x === 'string');
  if (j === null || typeof j !== 'object' || typeof j.move !== 'string' || !strings(j.repaired) || !strings(j.skipped))
    return bad();
  return j.move === move ? { move, repaired: j.repaired, skipped: j.skipped } : none;
}
