/**
 * `ringkv health`: ask a node's grpc.health.v1.Health/Check whether it serves, print
 * SERVING or NOT_SERVING and exit 0 only on SERVING. It is the container image's
 * HEALTHCHECK (Dockerfile, docker-compose.yml), so it must be quick, must never hang past
 * its deadline, and must say in one line why a node is not healthy.
 *
 * Owns: the health call and its wording. Must not: know what makes a node SERVING (the
 * node decides: `normal` and its store open, docs/node.md#lifecycle).
 */

import type * as grpc from '@grpc/grpc-js';
import { InvalidArgumentError, type Command } from 'commander';
import type { ClientSecurity } from '../security/credentials.js';
import type { ServiceConstructor } from '../transport/protos.js';
import { nodeAddress } from './arguments.js';
import { cliSecurity } from './credential-flags.js';

/**
 * What a health check found: the node's answer (SERVING, NOT_SERVING), SERVICE_UNKNOWN
 * for a service name it does not know, or UNREACHABLE, with why.
 */
export type HealthResult =
  | { readonly ok: true; readonly status: string }
  | { readonly ok: false; readonly status: string; readonly message: string };

export interface HealthOptions {
  /** host:port of the node. */
  readonly node: string;
  /** Health service name; '' is the node as a whole. */
  readonly service?: string;
  /** Longest the check may take, connecting included, ms. */
  readonly deadlineMs?: number;
  /** TLS, when the node speaks it (health is open to any caller the port lets in). */
  readonly security?: ClientSecurity;
}

let healthClient: ServiceConstructor<'grpc.health.v1.Health'> | undefined;

/** Call Health/Check once; never throws. gRPC is loaded on the first call, not with the CLI. */
export async function checkHealth(o: HealthOptions): Promise<HealthResult> {
  const [grpc, { channelCredentials }, { callUnary, serviceClient }, { describeFailure }] = await Promise.all([
    import('@grpc/grpc-js'),
    import('../security/credentials.js'),
    import('../transport/protos.js'),
    import('./failures.js'),
  ]);
  healthClient ??= serviceClient('grpc.health.v1.Health');
  const service = o.service ?? '';
  const deadlineMs = o.deadlineMs ?? 3000;
  const client = new healthClient(o.node, channelCredentials(o.security));
  try {
    // Fail fast: a refused connection is an answer (UNAVAILABLE) at once, not at the deadline.
    const reply = await callUnary(client, 'check', { service }, { deadline: Date.now() + deadlineMs });
    const status = String(reply.status);
    if (status === 'SERVING') return { ok: true, status };
    const what = service === '' ? 'the node' : `service "${service}"`;
    return {
      ok: false,
      status,
      message: `${o.node} answers but ${what} is ${status}: it is joining, leaving, stopping or not a member (see ringkv status)`,
    };
  } catch (e) {
    const code = (e as { code?: number })?.code;
    if (code === grpc.status.NOT_FOUND)
      return {
        ok: false,
        status: 'SERVICE_UNKNOWN',
        message: `${o.node} is a ringkv node but knows no health service "${service}"; it serves "" (ready: a normal member; omit --service) and "liveness" (the process runs)`,
      };
    if (code === grpc.status.UNIMPLEMENTED)
      return {
        ok: false,
        status: 'UNREACHABLE',
        message: `${o.node} answers gRPC but has no health service: is it a ringkv node?`,
      };
    // Unreachable, too slow, anything else: worded as every other command words it.
    return {
      ok: false,
      status: 'UNREACHABLE',
      message: describeFailure(e, { address: o.node, deadlineMs, deadlineFlag: '--deadline-ms' }),
    };
  } finally {
    client.close();
  }
}

function deadline(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 600_000)
    throw new InvalidArgumentError(`expected a whole number of ms from 1 to 600000, got "${value}"`);
  return n;
}

/** Add `ringkv health` to the program; `defaultNode` is what --node defaults to. */
export function registerHealth(program: Command, defaultNode: string): void {
  program
    .command('health')
    .description(
      'ask a node whether it serves (grpc.health.v1): prints SERVING or NOT_SERVING, exits 0 only on SERVING; the container HEALTHCHECK',
    )
    .option('--node <host:port>', 'the node to check (RINGKV_NODE)', nodeAddress, defaultNode)
    .option('--service <name>', 'health service name; "" (the default) is the node as a whole', '')
    .option('--deadline-ms <ms>', 'longest the check may take, connecting included', deadline, 3000)
    .action(async (o: { node: string; service: string; deadlineMs: number }) => {
      const r = await checkHealth({ ...o, security: cliSecurity() });
      if (r.ok) {
        console.log(r.status);
        return;
      }
      if (r.status !== 'UNREACHABLE') console.log(r.status);
      console.error(`ringkv: ${r.message}`);
      process.exitCode = 1;
    });
}
