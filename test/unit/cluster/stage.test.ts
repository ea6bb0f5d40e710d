import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  addToStage,
  clearStage,
  commitStage,
  EMPTY_STAGE,
  markStep,
  nextCommitStep,
  stageKey,
  type Stage,
  type StageContext,
  type StageResult,
} from '../../../src/cluster/stage.js';
import { statusOf } from '../../../src/membership/endpoint.js';
import { loadStage, saveStage } from '../../../src/node/topology/stage-file.js';
import { World } from './world.js';
import { claimJoin } from '../../../src/ring/index.js';

function ctx(w: World): StageContext {
  return { view: w.view(), state: (id) => w.nodes.get(id)?.state, isUp: w.isUp, replicas: 3 };
}

function ok(r: StageResult): Stage {
  if (r.kind !== 'ok') throw new Error(`${r.kind}: ${r.message}`);
  return r.stage;
}

/** A cluster of four owners and a standby s (--join manual). */
function cluster(): World {
  const w = World.of(['a', 'b', 'c', 'd'], ['s']);
  w.set('s', { standby: 'true', zone: 'z1' });
  return w;
}

const status = (w: World) => (id: string) => {
  const st = w.nodes.get(id)?.state;
  return st === undefined ? undefined : statusOf(st);
};

describe('staging changes', () => {
  it("stages a standby's join, a leave and a removal, in order, against the ring as it is", () => {
    const w = cluster();
    w.node('d').up = false;
    const stage = ok(
      addToStage(
        EMPTY_STAGE,
        [
          { kind: 'join', node: 's' },
          { kind: 'leave', node: 'b' },
          { kind: 'remove', node: 'd' },
        ],
        ctx(w),
      ),
    );
    expect(stage.steps.map((s) => `${s.change.kind} ${s.change.node} ${s.state}`)).toEqual([
      'join s staged',
      'leave b staged',
      'remove d staged',
    ]);
    expect(stage.steps[0]!.change).toEqual({ kind: 'join', node: 's', zone: 'z1', rack: '', weight: 1 });
    expect(stage.ringKey).toBe(stageKey(w.view()));
    expect(stage.committing).toBe(false);
  });

  it('refuses what cannot be staged, with the reason', () => {
    const w = cluster();
    const bad = (changes: { kind: string; node: string }[], stage: Stage = EMPTY_STAGE) =>
      addToStage(stage, changes, ctx(w));
    expect(bad([{ kind: 'join', node: 'a' }])).toEqual({
      kind: 'bad',
      message: 'a is not a standby: start it with --join manual to stage its join (status normal)',
    });
    expect(bad([{ kind: 'leave', node: 'nope' }])).toEqual({
      kind: 'bad',
      message: 'nope is not a member of this cluster (see ringkv status)',
    });
    expect(bad([{ kind: 'remove', node: 'b' }])).toMatchObject({
      kind: 'bad',
      message: expect.stringMatching(/b is up: stage leave b/),
    });
    expect(bad([{ kind: 'move', node: 'b' }])).toMatchObject({
      kind: 'bad',
      message: expect.stringMatching(/unknown change "move"/),
    });
    expect(
      bad([
        { kind: 'leave', node: 'b' },
        { kind: 'leave', node: 'b' },
      ]),
    ).toMatchObject({ kind: 'bad', message: expect.stringMatching(/a change of b is already staged/) });
    // Changes that cannot follow one another: the plan says so.
    expect(
      bad([
        { kind: 'leave', node: 'a' },
        { kind: 'leave', node: 'b' },
        { kind: 'leave', node: 'c' },
        { kind: 'leave', node: 'd' },
      ]),
    ).toMatchObject({ kind: 'bad', message: expect.stringMatching(/d is the last owner/) });
    w.node('c').up = false;
    expect(bad([{ kind: 'leave', node: 'c' }])).toMatchObject({
      kind: 'bad',
      message: expect.stringMatching(/c is down: a leave streams from the node itself/),
    });
    const committing = { ...ok(bad([{ kind: 'leave', node: 'b' }])), committing: true };
    expect(bad([{ kind: 'leave', node: 'a' }], committing)).toMatchObject({
      kind: 'busy',
      message: expect.stringMatching(/a commit is running/),
    });
    expect(clearStage(committing)).toMatchObject({ kind: 'busy' });
    const forming = new World();
    forming.add('s', 'joining', undefined);
    forming.set('s', { standby: 'true' });
    expect(addToStage(EMPTY_STAGE, [{ kind: 'join', node: 's' }], ctx(forming))).toEqual({
      kind: 'busy',
      message: 'no member owns tokens yet: the cluster is still forming',
    });
  });

  it('a commit is refused with nothing staged, while one runs, and once the ring changed since the plan', () => {
    const w = cluster();
    expect(commitStage(EMPTY_STAGE, w.view())).toMatchObject({
      kind: 'busy',
      message: expect.stringMatching(/nothing is staged/),
    });
    const stage = ok(addToStage(EMPTY_STAGE, [{ kind: 'leave', node: 'b' }], ctx(w)));
    const committed = ok(commitStage(stage, w.view()));
    expect(committed.committing).toBe(true);
    expect(commitStage(committed, w.view())).toMatchObject({ kind: 'busy', message: 'a commit is already running' });
    w.set('c', { status: 'leaving' });
    expect(commitStage(stage, w.view())).toMatchObject({
      kind: 'outdated',
      message: expect.stringMatching(/the ring changed since the plan \(c is leaving\)/),
    });
    expect(ok(clearStage(stage))).toEqual(EMPTY_STAGE);
  });

  it('staging after a commit ended starts a new stage (the old steps are history)', () => {
    const w = cluster();
    let stage = ok(commitStage(ok(addToStage(EMPTY_STAGE, [{ kind: 'leave', node: 'b' }], ctx(w))), w.view()));
    stage = markStep(markStep(stage, 0, 'running'), 0, 'done');
    expect(stage.committing).toBe(false);
    const next = ok(addToStage(stage, [{ kind: 'leave', node: 'c' }], ctx(w)));
    expect(next.steps.map((s) => s.change.node)).toEqual(['c']);
  });
});

describe('running a commit', () => {
  it('one change after another, each to its end; a restart in the middle starts the running change again and goes on', () => {
    const w = cluster();
    w.node('d').up = false;
    let stage = ok(
      commitStage(
        ok(
          addToStage(
            EMPTY_STAGE,
            [
              { kind: 'join', node: 's' },
              { kind: 'remove', node: 'd' },
            ],
            ctx(w),
          ),
        ),
        w.view(),
      ),
    );
    let started = -1;
    const next = () => nextCommitStep(stage, w.view(), status(w), (i) => i === started);
    expect(next()).toEqual({ kind: 'begin', index: 0 });
    stage = markStep(stage, 0, 'running');
    expect(next()).toEqual({ kind: 'start', index: 0, change: stage.steps[0]!.change });
    started = 0;
    w.set('s', { tokens: claimJoin(w.view().ring!, { id: 's' }, 3).join(',') });
    expect(next()).toEqual({ kind: 'wait', reason: 'waiting for s to join' });
    // The node holding the stage restarts: what it persisted says step 0 runs; this run has not started it.
    started = -1;
    expect(next()).toEqual({ kind: 'start', index: 0, change: stage.steps[0]!.change }); // admit again: "joining already"
    started = 0;
    w.set('s', { status: 'normal' });
    expect(next()).toEqual({ kind: 'done', index: 0 });
    stage = markStep(stage, 0, 'done');
    expect(next()).toEqual({ kind: 'begin', index: 1 });
    stage = markStep(stage, 1, 'running');
    // Another change in progress (not ours): one at a time.
    w.set('c', { status: 'leaving' });
    expect(next()).toMatchObject({
      kind: 'wait',
      reason: expect.stringMatching(/c is leaving: one topology change at a time/),
    });
    w.set('c', { status: 'normal' });
    expect(next()).toMatchObject({ kind: 'start', index: 1 });
    started = 1;
    w.set('a', { removed: 'd' });
    expect(next()).toEqual({ kind: 'done', index: 1 });
    stage = markStep(stage, 1, 'done');
    expect(stage.committing).toBe(false);
    expect(next()).toEqual({ kind: 'idle' });
  });

  it('a failed change ends the commit; the rest stay staged', () => {
    const w = cluster();
    let stage = ok(
      commitStage(
        ok(
          addToStage(
            EMPTY_STAGE,
            [
              { kind: 'leave', node: 'b' },
              { kind: 'leave', node: 'c' },
            ],
            ctx(w),
          ),
        ),
        w.view(),
      ),
    );
    stage = markStep(markStep(stage, 0, 'running'), 0, 'failed', 'b is down');
    expect(stage.committing).toBe(false);
    expect(stage.steps.map((s) => s.state)).toEqual(['failed', 'staged']);
    expect(nextCommitStep(stage, w.view(), status(w), () => false)).toEqual({ kind: 'idle' });
  });
});

describe('the stage on disk (stage.json)', () => {
  let dir = '';
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('saved and read back as it was; an empty stage removes the file; a damaged file says so', async () => {
    dir = await mkdtemp(join(tmpdir(), 'ringkv-stage-'));
    const w = cluster();
    w.node('d').up = false;
    const stage = markStep(
      ok(
        commitStage(
          ok(
            addToStage(
              EMPTY_STAGE,
              [
                { kind: 'join', node: 's' },
                { kind: 'leave', node: 'b' },
                { kind: 'remove', node: 'd' },
              ],
              ctx(w),
            ),
          ),
          w.view(),
        ),
      ),
      0,
      'running',
    );
    await saveStage(dir, stage);
    expect(await loadStage(dir)).toEqual(stage);
    await saveStage(dir, EMPTY_STAGE);
    await expect(readFile(join(dir, 'stage.json'))).rejects.toMatchObject({ code: 'ENOENT' });
    expect(await loadStage(dir)).toEqual(EMPTY_STAGE);
    await writeFile(
      join(dir, 'stage.json'),
      '{"ringKey":"x","committing":false,"steps":[{"change":{"kind":"fly","node":"a"},"state":"staged","error":""}]}',
    );
    await expect(loadStage(dir)).rejects.toThrow(/stage.json is damaged \(a bad change\)/);
    await writeFile(join(dir, 'stage.json'), 'nope');
    await expect(loadStage(dir)).rejects.toThrow(/damaged \(not JSON\)/);
  });
});
