/**
 * The staged topology changes this node holds (plan / commit / clear), in its data dir
 * next to node.json (`stage.json`), so that a restart keeps the plan and a running
 * commit goes on (cluster/stage.ts decides from what is read back). Written atomically
 * as node.json is (identity.ts's writeAtomically).
 *
 * Owns: the file and its format. Must not: decide anything about the stage.
 */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { StagedChange } from '../../cluster/staged-plan.js';
import { EMPTY_STAGE, type Stage, type StageStep, type StepState } from '../../cluster/stage.js';
import { readJsonFile, writeAtomically } from '../identity.js';

const FILE = 'stage.json';
const STATES: readonly StepState[] = ['staged', 'running', 'done', 'failed'];

/** Save `stage`; an empty stage removes the file. */
export async function saveStage(dir: string, stage: Stage): Promise<void> {
  if (stage.steps.length === 0 && !stage.committing) {
    await rm(join(dir, FILE), { force: true });
    return;
  }
  await writeAtomically(
    dir,
    FILE,
    `${JSON.stringify({ ringKey: stage.ringKey, committing: stage.committing, steps: stage.steps }, null, 2)}\n`,
  );
}

/** The stage saved in `dir`: empty when there is none; throws with what is wrong when the file is damaged. */
export async function loadStage(dir: string): Promise<Stage> {
  const bad = (what: string): never => {
    throw new Error(`${join(dir, FILE)} is damaged (${what}): the staged changes in it are discarded; plan them again`);
  };
  const j = (await readJsonFile(dir, FILE, bad)) as
    { ringKey?: unknown; committing?: unknown; steps?: unknown } | undefined;
  if (j === undefined) return EMPTY_STAGE;
  if (
    j === null ||
    typeof j !== 'object' ||
    typeof j.ringKey !== 'string' ||
    typeof j.committing !== 'boolean' ||
    !Array.isArray(j.steps)
  )
    return bad('not a stage');
  const steps = (j.steps as unknown[]).map((x): StageStep => {
    const s = x as { change?: Record<string, unknown>; state?: unknown; error?: unknown };
    const c = s?.change;
    if (
      c === undefined ||
      c === null ||
      typeof c.node !== 'string' ||
      !STATES.includes(s.state as StepState) ||
      typeof s.error !== 'string'
    )
      return bad('a bad step');
    let change: StagedChange;
    if (c.kind === 'join') {
      if (typeof c.zone !== 'string' || typeof c.rack !== 'string' || typeof c.weight !== 'number')
        return bad('a bad join');
      change = { kind: 'join', node: c.node, zone: c.zone, rack: c.rack, weight: c.weight };
    } else if (c.kind === 'leave' || c.kind === 'remove') change = { kind: c.kind, node: c.node };
    else return bad('a bad change');
    return { change, state: s.state as StepState, error: s.error as string };
  });
  return { ringKey: j.ringKey, committing: j.committing, steps };
}
