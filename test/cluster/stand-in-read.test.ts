/**
 * A read at R=1 coordinated by the node standing in for a down primary, on real node
 * processes (docs/reads-and-writes.md#what-a-read-at-r1-promises): with a bucket of n 2 on
 * three nodes and one of a key's primaries stopped, the third node is its stand-in; a get
 * through that node answers the value the live primary holds every time, never the
 * stand-in's own "not found".
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '../../src/client/index.js';
import { TestCluster } from '../../testkit/node-cluster.js';
import { waitFor } from '../../testkit/wait.js';

describe('a read through a stand-in', () => {
  let cluster: TestCluster;

  beforeAll(async () => {
    cluster = await TestCluster.create(3, 3, ['--request-timeout-ms', '2000']);
    for (const n of cluster.nodes) n.start();
    await cluster.formed();
  }, 90_000);

  afterAll(() => cluster?.destroy());

  it("answers what the live primary holds, not the stand-in's not-found, at R=1", async () => {
    const admin = cluster.nodes[0]!.admin();
    await admin.createBucket('pairs', { n: 2 });
    const all = new Client({ nodes: cluster.nodes.map((n) => n.address) });
    try {
      await all.put('item:1', 'held', { bucket: 'pairs', w: 2 });
    } finally {
      all.close();
    }
    const ends = await admin.endpoints('item:1', 'pairs');
    const [first, second] = ends.preferenceList.map((p) => p.id);
    const standIn = cluster.nodes.find((n) => n.id !== first && n.id !== second)!;
    // Stop the primary that is not the first node's: the first stays up to coordinate the status calls.
    const down = cluster.nodes.find((n) => n.id === (first === 'n1' ? second : first))!;
    down.signal('SIGTERM');
    const seen = standIn.admin();
    try {
      await waitFor(
        `${standIn.id} to see ${down.id} down and stand in for it`,
        30_000,
        async () => {
          const e = await seen.endpoints('item:1', 'pairs').catch(() => undefined);
          return e?.targets.some((t) => t.id === standIn.id && t.hintFor === down.id);
        },
        200,
      );
    } finally {
      seen.close();
    }
    const through = new Client({ nodes: [standIn.address], tokenAware: false });
    try {
      const answers = [];
      for (let i = 0; i < 30; i++)
        answers.push((await through.get('item:1', { bucket: 'pairs', r: 1 })).values.map(String).join());
      expect(answers).toEqual(Array.from({ length: 30 }, () => 'held'));
    } finally {
      through.close();
      admin.close();
    }
  }, 120_000);
});
