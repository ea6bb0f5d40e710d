/**
 * A kind's step between coordinator and replica: on a deleted bucket's key a step that
 * writes a value (a Paxos proposal or commit) is refused, BK_UNKNOWN, as the key's
 * coordinator would, and a prepare, which writes no value, is taken; a replica's reply
 * that does not decode, as a step's or as an earlier release's Paxos reply, fails the call
 * as the peer's fault (RK_INTERNAL), never as a made-up answer.
 */
import { describe, expect, it } from 'vitest';
import {
  PAXOS_COMMIT,
  PAXOS_PREPARE,
  PAXOS_PROPOSE,
  REGISTER,
  type KindStep,
  type RegisterState,
} from '../../../src/kinds/index.js';
import { LocalReplica } from '../../../src/replication/local-replica.js';
import { ReplicaFailure, callStep, type ReplicaApi } from '../../../src/replication/replica-api.js';
import { stepReplyOfPaxos } from '../../../src/transport/paxos-legacy.js';
import { MemoryEngine, Store } from '../../../src/storage/index.js';

describe("a replica's steps on a deleted bucket's key", () => {
  it('refuses the steps that write a value and takes a prepare', async () => {
    const store = await Store.open({ engine: new MemoryEngine() });
    const gone = Buffer.from('gone-key');
    const local = new LocalReplica(store, (k) => k.equals(gone));
    const api: ReplicaApi = { call: (_n, c) => local.call(c) };
    const ballot = { n: 2, by: 'n1' },
      proposal = { ballot, id: 'r1', value: Buffer.from('v') };
    const run = <A, R>(step: KindStep<RegisterState, A, R>, key: Buffer, arg: A): Promise<R> =>
      callStep(api, 'n1', REGISTER, step, key, arg, Date.now() + 1000);
    await expect(run(PAXOS_PREPARE, gone, ballot)).resolves.toMatchObject({ promised: true });
    for (const attempt of [run(PAXOS_PROPOSE, gone, proposal), run(PAXOS_COMMIT, gone, proposal)])
      await expect(attempt).rejects.toMatchObject({
        code: 'BK_UNKNOWN',
        message: expect.stringMatching(/was deleted: this replica takes no more writes of it/),
      });
    // Another key takes them.
    await expect(run(PAXOS_PROPOSE, Buffer.from('k'), proposal)).resolves.toEqual({ accepted: true });
    await store.close();
  });
});

describe("a replica's reply that does not decode", () => {
  const ballot = { n: 2, by: 'n1' };
  it("fails a step as the peer's fault, naming the peer and the step", async () => {
    for (const reply of [Buffer.from([7]), Buffer.from([0]), Buffer.from([1, 0, 0])]) {
      const api: ReplicaApi = { call: () => Promise.resolve(reply as never) };
      const e = await callStep(api, 'n2', REGISTER, PAXOS_PREPARE, Buffer.from('k'), ballot, Date.now() + 1000).catch(
        (x: unknown) => x,
      );
      expect(e).toBeInstanceOf(ReplicaFailure);
      expect(e).toMatchObject({
        kind: 'refused',
        code: 'RK_INTERNAL',
        message: expect.stringMatching(/^n2 answered a Paxos prepare with bytes that do not decode: /),
      });
    }
  });

  it("fails an earlier release's Paxos reply whose state is not a register record", () => {
    const call = {
      op: 'step' as const,
      key: Buffer.from('k'),
      kind: REGISTER.format,
      step: PAXOS_PREPARE.name,
      arg: PAXOS_PREPARE.arg.encode(ballot),
    };
    expect(() => stepReplyOfPaxos(call, { id: 1, op: 'paxos', ok: true, state: Buffer.from([5, 0]) }, 'n3')).toThrow(
      expect.objectContaining({
        code: 'RK_INTERNAL',
        message: expect.stringMatching(/^n3 answered a Paxos step with a state that does not decode/),
      }),
    );
  });
});
