/**
 * An upgrade, the way an operator does one: three containers of the previous release
 * (RINGKV_PREVIOUS_IMAGE, scripts/release-image.sh) in zones a, b and c, each with its data
 * directory on the host; under a default client's load, each in turn is stopped
 * (`docker stop`: SIGTERM, so it drains) and a container of the current image
 * (RINGKV_IMAGE) is started on the same data directory and address. While it runs the
 * cluster holds both versions: their nodes gossip, stream hints, coordinate and answer
 * replica calls for each other. Not one request fails, and every acknowledged write
 * reads back from the upgraded cluster. What may change between versions, and what may
 * not, is in docs/operations.md#upgrades; the wire half of that rule is also checked
 * without containers by test/unit/transport/proto-compat.test.ts.
 *
 * Run by `npm run test:docker`, which builds both images and names them.
 */
import { execFile } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '../../src/client/kv.js';
import { freePort } from '../../testkit/ports.js';
import { Load } from '../../testkit/load.js';
import { noEngine, normal, startNode, type NodeContainer } from './containers.js';

const run = promisify(execFile);
const previous = process.env.RINGKV_PREVIOUS_IMAGE;
const current = process.env.RINGKV_IMAGE;
const NAMES = ['n1', 'n2', 'n3'];
const ZONES: Record<string, string> = { n1: 'a', n2: 'b', n3: 'c' };
const KEYS = 100;

const skip =
  previous === undefined || current === undefined
    ? 'RINGKV_IMAGE or RINGKV_PREVIOUS_IMAGE is unset (npm run test:docker builds both images and sets them)'
    : await noEngine();
if (skip !== undefined) process.stdout.write(`test:docker upgrade: skipped — ${skip}\n`);

async function imageId(image: string): Promise<string> {
  return (await run('docker', ['image', 'inspect', '--format', '{{.Id}}', image])).stdout.trim();
}

describe.skipIf(skip !== undefined)(`an upgrade from ${previous} to ${current}, one node at a time`, () => {
  const addresses = new Map<string, string>();
  const dataDirs = new Map<string, string>();
  const nodes = new Map<string, NodeContainer>();

  async function start(name: string, image: string): Promise<NodeContainer> {
    const node = await startNode({
      name,
      image,
      address: addresses.get(name)!,
      seeds: NAMES.map((n) => addresses.get(n)!),
      zone: ZONES[name]!,
      dataDir: dataDirs.get(name),
    });
    nodes.set(name, node);
    return node;
  }

  beforeAll(async () => {
    for (const n of NAMES) {
      addresses.set(n, `127.0.0.1:${await freePort()}`);
      const dir = mkdtempSync(join(tmpdir(), `ringkv-upgrade-${n}-`));
      chmodSync(dir, 0o777); // the image's user (uid 10001) writes it
      dataDirs.set(n, dir);
    }
    await Promise.all(NAMES.map((n) => start(n, previous!)));
    await normal(addresses.get('n1')!, NAMES, 60_000);
  }, 15 * 60_000);

  afterAll(async () => {
    await Promise.allSettled([...nodes.values()].map((n) => n.container.stop({ timeout: 30_000 })));
    for (const dir of dataDirs.values()) rmSync(dir, { recursive: true, force: true });
  }, 5 * 60_000);

  it(
    'replaces every node by the current image under load with not one request failed and every acknowledged write readable',
    async () => {
      expect(await imageId(previous!)).not.toBe(await imageId(current!));
      const client = new Client({ nodes: NAMES.map((n) => addresses.get(n)!), deadlineMs: 10_000 });
      let traffic: Load | undefined;
      try {
        await Load.warm(client, KEYS);
        const load = (traffic = Load.start(client, { inFlight: 4, warmKeys: KEYS }));
        await new Promise((r) => setTimeout(r, 2000));
        const steps: { name: string; drained: boolean; okDuring: number; startMs: number }[] = [];
        for (const name of NAMES) {
          const before = load.ok;
          const old = nodes.get(name)!;
          await old.container.stop({ timeout: 30_000 }); // SIGTERM, 30 s grace, as docker stop
          const drained = old.log.some((l) => l.includes('draining: peers told this node stops'));
          const t0 = Date.now();
          await start(name, current!); // SERVING: caught up on the hints its peers held for it
          // Every node, of either version, sees all three up and normal.
          for (const n of NAMES) await normal(addresses.get(n)!, NAMES, 60_000);
          steps.push({ name, drained, okDuring: load.ok - before, startMs: Date.now() - t0 });
        }
        await load.stop();
        const summary = load.summary({ steps });
        expect(load.failed, summary).toEqual([]);
        for (const s of steps) {
          expect(s.drained, summary).toBe(true);
          expect(s.okDuring, summary).toBeGreaterThan(20);
        }
        expect([...nodes.values()].map((n) => n.image)).toEqual([current, current, current]);
        expect(await load.lost(), summary).toEqual([]);
        process.stdout.write(`upgrade ${previous} -> ${current}: ${summary}\n`);
      } finally {
        void traffic?.stop();
        client.close();
      }
    },
    10 * 60_000,
  );
});
