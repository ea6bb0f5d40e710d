/**
 * docker-compose.yml itself, on a real engine: the cluster comes up and goes healthy,
 * `ringkv status` through a published port shows three UN members; a rolling restart
 * (`docker restart` of each container in turn, i.e. SIGTERM, each waited for until
 * healthy) under a default client's load fails not one request; `down` keeps the
 * volumes and `up` brings the data back.
 *
 * Uses the image scripts/test-docker.sh built (RINGKV_IMAGE) and Debian's docker-compose
 * 1.29 (or Compose v2's `docker compose`), with its own project name and free host ports.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '../../src/client/kv.js';
import { freePort } from '../../testkit/ports.js';
import { waitFor } from '../../testkit/wait.js';
import { Load } from '../../testkit/load.js';

const ROOT = join(import.meta.dirname, '../..');
const MAIN = join(ROOT, 'src/cli/main.ts');
const run = promisify(execFile);
const image = process.env.RINGKV_IMAGE;
const KEYS = 100;

async function composeCommand(): Promise<string[] | undefined> {
  for (const cmd of [['docker-compose'], ['docker', 'compose']]) {
    try {
      await run(cmd[0]!, [...cmd.slice(1), 'version'], { timeout: 20_000 });
      return cmd;
    } catch {
      /* try the next */
    }
  }
  return undefined;
}

const compose = image === undefined ? undefined : await composeCommand();
const skip =
  image === undefined
    ? 'RINGKV_IMAGE is unset (npm run test:docker builds the image and sets it)'
    : compose === undefined
      ? 'neither docker-compose nor docker compose runs here'
      : undefined;
if (skip !== undefined) process.stdout.write(`test:docker compose: skipped — ${skip}\n`);

describe.skipIf(skip !== undefined)('docker-compose.yml: a 3-node cluster', () => {
  const project = `ringkv-test-${process.pid}`;
  const env: Record<string, string> = { ...(process.env as Record<string, string>), RINGKV_IMAGE: image ?? '' };
  const ports: Record<string, number> = {};

  const dc = async (...args: string[]): Promise<string> => {
    const { stdout, stderr } = await run(
      compose![0]!,
      [...compose!.slice(1), '-p', project, '-f', join(ROOT, 'docker-compose.yml'), ...args],
      { env, timeout: 300_000 },
    );
    return stdout + stderr;
  };
  const container = async (service: string): Promise<string> => (await dc('ps', '-q', service)).trim();
  const health = async (service: string): Promise<string> => {
    const id = await container(service);
    if (id === '') return 'none';
    return (await run('docker', ['inspect', '--format', '{{.State.Health.Status}}', id], { env })).stdout.trim();
  };
  const healthy = (services: string[], timeoutMs = 180_000): Promise<unknown> =>
    waitFor(
      `${services.join(', ')} healthy`,
      timeoutMs,
      async () => (await Promise.all(services.map(health))).every((h) => h === 'healthy'),
      500,
    );
  const addresses = (): string[] => ['n1', 'n2', 'n3'].map((n) => `127.0.0.1:${ports[n]}`);
  // The nodes advertise n1:7001 and so on, names only the compose network resolves: from
  // the host, a client sends to the published ports, not where the ring says.
  const client = (): Client => new Client({ nodes: addresses(), tokenAware: false, deadlineMs: 10_000 });

  beforeAll(async () => {
    for (const n of ['n1', 'n2', 'n3']) {
      ports[n] = await freePort();
      env[`RINGKV_${n.toUpperCase()}_PORT`] = String(ports[n]);
      env[`RINGKV_${n.toUpperCase()}_HTTP_PORT`] = String(await freePort());
    }
    await dc('up', '-d', '--no-build');
    await healthy(['n1', 'n2', 'n3']);
  }, 300_000);

  afterAll(async () => {
    await dc('down', '-v', '--timeout', '30').catch((e: unknown) =>
      process.stdout.write(`compose down failed: ${(e as Error).message}\n`),
    );
  }, 120_000);

  it('goes healthy, and ringkv status through the published port shows three UN members', async () => {
    const { stdout } = await run(process.execPath, ['--import', 'tsx', MAIN, 'status', '--node', addresses()[0]!], {
      timeout: 60_000,
    });
    const rows = stdout.split('\n').filter((l) => /^[UD][NJLTR] /.test(l));
    expect(
      rows.map((r) => r.slice(0, 2)),
      stdout,
    ).toEqual(['UN', 'UN', 'UN']);
    expect(rows.map((r) => r.split(/\s+/)[1]).sort()).toEqual(['n1:7001', 'n2:7001', 'n3:7001']);
  });

  let traffic: Load | undefined;

  it('restarts each container in turn (docker restart: SIGTERM) under load with not one request failed', async () => {
    const c = client();
    try {
      await Load.warm(c, KEYS);
      const load = (traffic = Load.start(c, { inFlight: 4, warmKeys: KEYS }));
      const during: Record<string, number> = {};
      for (const service of ['n1', 'n2', 'n3']) {
        const before = load.ok;
        await run('docker', ['restart', '--time', '30', await container(service)], { env, timeout: 120_000 });
        await waitFor(
          `${service} restarted`,
          30_000,
          async () => (await health(service)) !== 'healthy' || load.ok - before > 0,
          100,
        );
        await healthy([service]);
        during[service] = load.ok - before;
      }
      await load.stop();
      const summary = load.summary({ during });
      expect(load.failed, summary).toEqual([]);
      for (const s of ['n1', 'n2', 'n3']) expect(during[s], summary).toBeGreaterThan(20);
      process.stdout.write(`compose rolling restart: ${summary}\n`);
    } finally {
      void traffic?.stop();
      c.close();
    }
  }, 600_000);

  it('comes down with its volumes kept and comes back up with every acknowledged write', async () => {
    await dc('down', '--timeout', '30');
    expect(await container('n1')).toBe('');
    await dc('up', '-d', '--no-build');
    await healthy(['n1', 'n2', 'n3']);
    const c = client();
    try {
      // Every write the load had acknowledged, read through a new client after the restart.
      expect(traffic?.acked.length).toBeGreaterThan(0);
      expect(await traffic!.lost(c)).toEqual([]);
    } finally {
      c.close();
    }
  }, 600_000);
});
