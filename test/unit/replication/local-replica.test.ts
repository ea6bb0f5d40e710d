/**
 * LocalReplica's step call on a deleted bucket's key: a step that writes a value (a
 * Paxos proposal or commit) is refused, BK_UNKNOWN, as the key's coordinator would; a
 * prepare, which writes no value, is taken.
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
import { callStep, type ReplicaApi } from '../../../src/replication/replica-api.js';
import { MemoryEngine, Store } from '../../../src/storage/index.js';

describe("a replica's steps on a deleted bucket's key", () => {
  it('refuses the steps that write a value and takes a prepare', async () => {
    const store = await Store.open({ engine: new MemoryEngine() });
    const gone = Buffer.from('gone-key');
    const local = new LocalReplica(store, (k) => k.equals(gone));
    const api: ReplicaApi = { call: (_n, c) => local.call(c) };
    const ballot = { n: 2, by: 'n1' },
      proposal = { ballot, id: 'r1', value: Buffer.from('v') };
    const run = <A, R>(step: Parameters<typeof callStep<unknown, A, R>>[3], key: Buffer, arg: A) =>
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
