/**
 * Trees kept on write across kill -9, on real processes: 3 nodes (N=3, no hints), writers
 * under load while n3 is SIGKILLed and restarted three times. Its kept trees are loaded
 * from disk at each restart with no rebuild (leaves and journal written in the records'
 * batches). Then `repair` from n1: it exchanges at most the keys written while n3 could
 * miss them (no tree/record mismatch shows up as a difference), and a second repair
 * compares every range on kept trees, finds no differing leaf and reads no record. Each
 * node's storage is finally read directly: identical.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Client } from '../../src/client/index.js';
import { TestCluster, type NodeProcess } from '../../testkit/node-cluster.js';
import { waitFor } from '../../testkit/wait.js';
import { contents, stopAll, upEverywhere } from './topology-check.js';

async function repair(n: NodeProcess) {
  const before = await n.admin().repairStatus();
  await n.admin().repair();
  return waitFor(
    'the repair done',
    60_000,
    async () => {
      const s = await n.admin().repairStatus();
      return s.finishedAtMs > 0 && s.id !== before.id ? s : undefined;
    },
    200,
  );
}

describe('repair on trees kept on write', () => {
  let cluster: TestCluster;
  afterEach(() => cluster?.destroy());

  it('after kill -9 during writes: repair moves only what was missed, then finds every range in sync reading no record', async () => {
    cluster = await TestCluster.create(3, 3, [
      '--request-timeout-ms',
      '3000',
      '--max-hint-window-ms',
      '0',
      '--tokens',
      '8',
    ]);
    const [n1, n2, n3] = cluster.nodes as [NodeProcess, NodeProcess, NodeProcess];
    for (const n of cluster.nodes) n.start();
    await upEverywhere(cluster, () => true);
    const client = new Client({ nodes: [n1.address, n2.address], deadlineMs: 5000, hedge: false });
    /** Keys whose write started while n3 could miss it: from 5 s (a deadline) before a kill until 5 s after it is seen up again. */
    const mayMiss = new Set<string>();
    let risky = false;
    let written = 0;
    let stop = false;
    const inFlight = new Set<string>();
    const writers = Array.from({ length: 8 }, async (_, w) => {
      for (let i = 0; !stop && i < 5000; i++) {
        const key = `w${w}-${i}`;
        if (risky) mayMiss.add(key);
        inFlight.add(key);
        await client.put(key, `value-${i}`.padEnd(64, 'x'), { w: 2 }).catch(() => undefined);
        inFlight.delete(key);
        written++;
      }
    });
    const beginRisk = (): void => {
      risky = true;
      for (const k of inFlight) mayMiss.add(k); // in flight when the window opened
    };
    try {
      const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
      for (let cycle = 0; cycle < 3; cycle++) {
        await sleep(1500);
        beginRisk(); // from here until n3 is back and settled, a write may miss it
        await sleep(300);
        n3.signal('SIGKILL');
        await n3.exit;
        await upEverywhere(cluster, (id) => id !== 'n3');
        await sleep(500);
        n3.start();
        await upEverywhere(cluster, () => true);
        await sleep(5000);
        risky = false;
      }
      stop = true;
      await Promise.all(writers);
      expect(written).toBeGreaterThan(200);
      const first = await repair(n1);
      expect(first).toMatchObject({ failed: 0, skipped: 0 });
      expect(first.done).toBe(first.ranges);
      console.log(
        `first repair: ${first.ranges} ranges, ${first.kept} on kept trees, ${first.identical} in sync, ${first.leavesDiffering} leaves differing, ${first.keysExchanged} keys exchanged (${mayMiss.size} keys written while n3 could miss them, ${written} in all), ${first.recordsRead} records read`,
      );
      expect(first.keysExchanged).toBeLessThanOrEqual(mayMiss.size);
      // Trees of ranges new to a node may still be building at the first repair: the next ones use them.
      const second = await waitFor(
        'a repair on kept trees everywhere',
        60_000,
        async () => {
          const s = await repair(n1);
          return s.kept === s.ranges ? s : undefined;
        },
        1000,
      );
      console.log(
        `second repair: ${second.ranges} ranges, ${second.kept} on kept trees, ${second.leavesDiffering} leaves differing, ${second.recordsRead} records read`,
      );
      expect(second).toMatchObject({
        failed: 0,
        leavesDiffering: 0,
        keysExchanged: 0,
        recordsRead: 0,
        identical: second.ranges,
      });
    } finally {
      stop = true;
      await Promise.all(writers);
      client.close();
    }
    await stopAll(cluster.nodes);
    const [a, b, c] = (await Promise.all(cluster.nodes.map(contents))) as [
      Map<string, string>,
      Map<string, string>,
      Map<string, string>,
    ];
    expect(b).toEqual(a);
    expect(c).toEqual(a);
  }, 240_000);
});
