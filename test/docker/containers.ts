/**
 * Node containers for the container suite (test/docker): whether an engine answers, a
 * ringkv node started from an image with host networking (its gRPC port a free
 * 127.0.0.1 port, so the test's traffic stays on this machine) and waited for until its
 * HEALTHCHECK passes, and waits on what a node's status shows.
 */
import { existsSync } from 'node:fs';
import type { Readable } from 'node:stream';
import { GenericContainer, Wait, getContainerRuntimeClient, type StartedTestContainer } from 'testcontainers';
import { AdminClient, type StatusReply } from '../../src/client/admin.js';
import { freePort } from '../../testkit/ports.js';
import { waitFor } from '../../testkit/wait.js';

/** Why the suite cannot run here, or undefined when a Docker engine answers. */
export async function noEngine(): Promise<string | undefined> {
  try {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('no answer within 20 s')), 20_000);
    });
    await Promise.race([getContainerRuntimeClient(), timeout]).finally(() => clearTimeout(timer));
    return undefined;
  } catch (e) {
    const host = process.env.DOCKER_HOST;
    if (!host && !existsSync('/var/run/docker.sock'))
      return 'no Docker engine found (DOCKER_HOST unset and /var/run/docker.sock absent); install Docker to run it';
    return `no Docker engine answers at ${host ? `DOCKER_HOST=${host}` : '/var/run/docker.sock'} (${(e as Error).message}); start it to run this suite`;
  }
}

/** A node container and its log, for messages when something goes wrong. */
export interface NodeContainer {
  readonly name: string;
  readonly image: string;
  readonly container: StartedTestContainer;
  /** host:port of its gRPC port, on 127.0.0.1 (host networking). */
  readonly address: string;
  readonly log: string[];
}

export interface NodeSpec {
  readonly name: string;
  readonly image: string;
  /** Its gRPC address, 127.0.0.1:port. */
  readonly address: string;
  readonly seeds: readonly string[];
  readonly zone: string;
  /** A host directory mounted as its data directory, so that another container can take over its data. */
  readonly dataDir?: string;
  readonly env?: Record<string, string>;
}

/** Start a node from `spec.image` and wait until its own health command says SERVING. */
export async function startNode(spec: NodeSpec): Promise<NodeContainer> {
  const log: string[] = [];
  try {
    let c = new GenericContainer(spec.image)
      .withNetworkMode('host')
      .withEnvironment({
        RINGKV_ID: spec.name,
        RINGKV_LISTEN: spec.address,
        RINGKV_ADVERTISE: spec.address,
        RINGKV_HTTP: `127.0.0.1:${await freePort()}`,
        RINGKV_SEEDS: spec.seeds.join(','),
        RINGKV_ZONE: spec.zone,
        RINGKV_STREAM_BYTES_PER_SECOND: '0',
        ...spec.env,
      })
      // The image's own health command on the node's port, polled every second instead of every 10 s.
      .withHealthCheck({
        test: ['CMD', 'node', '/app/dist/cli/main.js', 'health', '--node', spec.address],
        interval: 1000,
        timeout: 5000,
        retries: 3,
        startPeriod: 120_000,
      })
      .withWaitStrategy(Wait.forHealthCheck())
      .withStartupTimeout(180_000)
      .withLogConsumer((stream: Readable) => {
        stream.on('data', (d: Buffer | string) =>
          log.push(
            ...String(d)
              .split('\n')
              .filter((l) => l !== ''),
          ),
        );
      });
    if (spec.dataDir !== undefined) c = c.withBindMounts([{ source: spec.dataDir, target: '/var/lib/ringkv' }]);
    const container = await c.start();
    return { name: spec.name, image: spec.image, container, address: spec.address, log };
  } catch (e) {
    throw new Error(
      `${spec.name} (${spec.image}) did not become healthy: ${(e as Error).message}\n${spec.name}'s last log lines:\n${log.slice(-30).join('\n')}`,
    );
  }
}

export async function status(address: string): Promise<StatusReply | undefined> {
  const admin = new AdminClient(address, 3000);
  try {
    return await admin.status();
  } catch {
    return undefined;
  } finally {
    admin.close();
  }
}

/** Wait until the node at `address` sees exactly `ids` up and normal. */
export function normal(address: string, ids: string[], timeoutMs: number): Promise<StatusReply> {
  return waitFor(
    `${ids.join(', ')} up and normal as ${address} sees them`,
    timeoutMs,
    async () => {
      const s = await status(address);
      const live = s?.members
        .filter((m) => m.up && m.status === 'normal')
        .map((m) => m.id)
        .sort();
      return JSON.stringify(live) === JSON.stringify([...ids].sort()) ? s : undefined;
    },
    500,
  );
}
