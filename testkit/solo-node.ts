/**
 * One ringkv node in the test's own process, alone in its cluster (N = 1), started before
 * the file's tests and stopped after them: what the CLI commands' tests call.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll } from 'vitest';
import { resolveConfig } from '../src/node/config.js';
import { RingkvNode } from '../src/node/node.js';
import { waitFor } from './wait.js';

/** Registers the node's start and stop with the file's hooks; the returned function gives the node once started. */
export function soloNode(name: string): () => RingkvNode {
  const root = mkdtempSync(join(tmpdir(), `ringkv-${name}-`));
  let node: RingkvNode | undefined;
  beforeAll(async () => {
    const config = resolveConfig(
      {
        listen: '127.0.0.1:0',
        dataDir: join(root, 'data'),
        id: 'solo',
        replicas: 1,
        gossipIntervalMs: 200,
        shutdownGraceMs: 1000,
      },
      {},
    );
    node = await RingkvNode.start(config, pino({ level: 'silent' }));
    await waitFor('the node to form its cluster', 20_000, () => node!.status === 'normal' || undefined);
  }, 60_000);
  afterAll(async () => {
    await node?.stop();
    rmSync(root, { recursive: true, force: true });
  });
  return () => node!;
}
