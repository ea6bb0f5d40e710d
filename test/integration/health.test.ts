/**
 * `ringkv health` (the container HEALTHCHECK) against a real node in this process, run
 * as the CLI it is: SERVING exits 0; an unknown service, or no node on the port, exits 1
 * with one line in ringkv's words and no raw gRPC text.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkHealth } from '../../src/cli/health-check.js';
import { resolveConfig } from '../../src/node/config.js';
import { RingkvNode } from '../../src/node/node.js';
import { freePort } from '../../testkit/ports.js';
import { waitFor } from '../../testkit/wait.js';

const MAIN = join(import.meta.dirname, '../../src/cli/main.ts');
const root = mkdtempSync(join(tmpdir(), 'ringkv-health-'));
let node: RingkvNode | undefined;

function cli(...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const env = { ...process.env };
    delete env.RINGKV_NODE;
    const child = spawn(process.execPath, ['--import', 'tsx', MAIN, ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

beforeAll(async () => {
  const config = resolveConfig(
    {
      listen: '127.0.0.1:0',
      dataDir: join(root, 'n1'),
      seeds: '127.0.0.1:1',
      gossipIntervalMs: 100,
      id: 'h1',
      shutdownGraceMs: 1000,
    },
    {},
  );
  node = await RingkvNode.start(config, pino({ level: 'silent' }));
  await waitFor('node normal', 20_000, () => node!.status === 'normal');
  // Normal, then caught up (catch-up.ts): alone, SERVING once a few gossip rounds showed no peer.
  await waitFor(
    'node caught up',
    20_000,
    async () => (await checkHealth({ node: node!.address, deadlineMs: 1000 })).ok,
    100,
  );
});

afterAll(async () => {
  await node?.stop();
  rmSync(root, { recursive: true, force: true });
});

describe('ringkv health', () => {
  it('prints SERVING and exits 0 for a node that is a normal member', async () => {
    const r = await cli('health', '--node', node!.address);
    expect(r).toMatchObject({ code: 0, stdout: 'SERVING\n' });
    expect(r.stderr).toBe('');
  });

  it('exits 1 with a clear line for a health service the node does not know', async () => {
    const r = await cli('health', '--node', node!.address, '--service', 'nope');
    expect(r).toMatchObject({ code: 1, stdout: 'SERVICE_UNKNOWN\n' });
    expect(r.stderr.trim()).toBe(
      `ringkv: ${node!.address} is a ringkv node but knows no health service "nope"; it serves "" (ready: a normal member; omit --service) and "liveness" (the process runs)`,
    );
  });

  it('exits 1 with one line in ringkv words when no node listens on the port', async () => {
    const address = `127.0.0.1:${await freePort()}`;
    const r = await cli('health', '--node', address, '--deadline-ms', '2000');
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    const lines = r.stderr.trim().split('\n');
    expect(lines).toEqual([
      `ringkv: no ringkv node answers at ${address} (connection refused); is it running, and is that its --listen address? Pass --node host:port of a running node (or several, comma-separated), or set RINGKV_NODES (gRPC UNAVAILABLE)`,
    ]);
    expect(r.stderr).not.toMatch(/ECONNREFUSED|No connection established|14 UNAVAILABLE/);
  });

  it('serves "liveness" while the process runs, even while "" is NOT_SERVING (a standby waiting to join)', async () => {
    const config = resolveConfig(
      {
        listen: '127.0.0.1:0',
        dataDir: join(root, 'standby'),
        seeds: node!.address,
        gossipIntervalMs: 100,
        id: 'h2',
        join: 'manual',
        shutdownGraceMs: 1000,
      },
      {},
    );
    const standby = await RingkvNode.start(config, pino({ level: 'silent' }));
    try {
      expect(standby.status).toBe('joining');
      expect(await checkHealth({ node: standby.address })).toMatchObject({ ok: false, status: 'NOT_SERVING' });
      expect(await checkHealth({ node: standby.address, service: 'liveness' })).toEqual({
        ok: true,
        status: 'SERVING',
      });
      const r = await cli('health', '--node', standby.address, '--service', 'liveness');
      expect(r).toMatchObject({ code: 0, stdout: 'SERVING\n' });
    } finally {
      await standby.stop();
    }
  });

  it('rejects a bad --deadline-ms before calling anything', async () => {
    const r = await cli('health', '--deadline-ms', '0');
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/--deadline-ms.*expected a whole number of ms from 1 to 600000, got "0"/);
  });

  it('reports NOT_SERVING once the node stops (checkHealth, the library call)', async () => {
    const address = node!.address;
    expect(await checkHealth({ node: address })).toEqual({ ok: true, status: 'SERVING' });
    const stopping = node!.stop();
    const seen = await waitFor(
      'not SERVING',
      10_000,
      async () => {
        const h = await checkHealth({ node: address, deadlineMs: 500 });
        return h.ok ? undefined : h;
      },
      20,
    );
    expect(seen.ok).toBe(false);
    expect(['NOT_SERVING', 'UNREACHABLE']).toContain(seen.status);
    await stopping;
    node = undefined;
    const after = await checkHealth({ node: address, deadlineMs: 500 });
    expect(after).toMatchObject({ ok: false, status: 'UNREACHABLE' });
  });
});
