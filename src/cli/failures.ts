/**
 * What the `ringkv` command prints when a command fails. gRPC's own texts ("Name
 * resolution failed for target dns:x", "Deadline exceeded after 0.001s") describe the
 * client library, not what the user should do; they are said again in ringkv's words.
 * Messages a node sent are already in ringkv's words and are kept as they are. Every
 * gRPC failure ends with its code name, "(gRPC UNAVAILABLE)", for scripts to match.
 *
 * Owns: the wording of failures and the exit codes. Must not: retry or decide anything.
 */

import * as grpc from '@grpc/grpc-js';
import { NO_NODE_TRIED } from '../client/kv.js';
import { codeName } from '../transport/status.js';
import { CliError } from './exit.js';

/** Where a call went, to name it in the message. */
export interface CallTarget {
  /** host:port as the user gave it (--node). */
  readonly address: string;
  /** The call's deadline, ms, and the flag that sets it, when the user can set it. */
  readonly deadlineMs?: number;
  readonly deadlineFlag?: string;
}

interface GrpcLike {
  readonly code: number;
  readonly details?: string;
}

function isGrpc(e: unknown): e is GrpcLike {
  return (
    typeof e === 'object' &&
    e !== null &&
    typeof (e as { code?: unknown }).code === 'number' &&
    (e as { code: number }).code in grpc.status
  );
}

const RETRY_NODE = 'pass --node host:port of a running node (or several, comma-separated), or set RINGKV_NODES';

/**
 * The message for a failed call to `target`: gRPC's client-side texts translated, a
 * node's own message kept; both with the code name. Anything that is not a gRPC error
 * (a file that cannot be read, say) keeps its message.
 */
export function describeFailure(e: unknown, target?: CallTarget): string {
  if (e instanceof CliError) return e.message;
  if (!isGrpc(e)) return (e as Error)?.message ?? String(e);
  const details = (e.details ?? '').replace(/\.? ?Resolution note: ?.*$/s, '');
  const at = target?.address;
  const name = codeName(e.code);
  const said = (text: string): string => `${text} (gRPC ${name})`;
  if (e.code === grpc.status.UNAVAILABLE) {
    if (/^(Name resolution failed|DNS resolution failed|Failed to parse DNS address)/.test(details)) {
      const where = at ?? /target dns:(\S+)/.exec(details)?.[1] ?? 'that address';
      const noPort = at !== undefined && !/:\d+$/.test(at) ? ' (and it has no :port)' : '';
      return said(`cannot reach a ringkv node at ${where}: the name does not resolve${noPort}; ${RETRY_NODE}`);
    }
    const tls =
      /certificate|self.signed|unable to verify|Hostname\/IP does not match|SSL|TLS|wrong version number/i.exec(
        details,
      );
    if (tls !== null && !/ECONNREFUSED/.test(details)) {
      const why = details.replace(/^No connection established\. Last error: (Error: )?/, '');
      return said(
        `the TLS connection to ${at ?? 'the node'} failed (${why}): --tls-ca must be the CA that issued the nodes' certificates, and the node's certificate must name the address dialled (docs/security.md)`,
      );
    }
    const cause = /ECONNREFUSED/.test(details)
      ? 'connection refused'
      : /ETIMEDOUT/.test(details)
        ? 'connection timed out'
        : /EHOSTUNREACH|ENETUNREACH/.test(details)
          ? 'no route to it'
          : undefined;
    if (cause !== undefined || /^(No connection established|Connection dropped|Failed to connect)/.test(details)) {
      // The connection was made and then dropped (no errno): what a node with TLS on does to a plaintext client.
      const tlsHint =
        cause === undefined && /Failed to connect|Connection dropped/.test(details)
          ? '; if the cluster runs with TLS, pass --tls-ca (docs/security.md)'
          : '';
      return said(
        `no ringkv node answers at ${at ?? 'that address'}${cause ? ` (${cause})` : ''}; is it running, and is that its --listen address?${tlsHint ? '' : ` ${RETRY_NODE[0]!.toUpperCase()}${RETRY_NODE.slice(1)}`}${tlsHint}`,
      );
    }
  }
  if (e.code === grpc.status.DEADLINE_EXCEEDED && (/^Deadline exceeded/.test(details) || details === NO_NODE_TRIED)) {
    // The client's own deadline (grpc-js's, or ours before any call went out): the node
    // never answered. (A node's own timeout says which replicas it waited for.)
    const within =
      target?.deadlineMs !== undefined
        ? ` within ${target.deadlineMs} ms${target.deadlineFlag ? ` (${target.deadlineFlag})` : ''}`
        : ' in time';
    const raise = target?.deadlineFlag ? `, or the deadline too short: raise ${target.deadlineFlag}` : '';
    return said(
      `no answer from ${at ?? 'the node'}${within}; the node may be down, unreachable or overloaded (${RETRY_NODE})${raise}`,
    );
  }
  const tooBig = /(Received|Sent) message larger than max \((\d+) vs\.? (\d+)\)/.exec(details);
  if (e.code === grpc.status.RESOURCE_EXHAUSTED && tooBig) {
    const what = tooBig[1] === 'Sent' ? 'request' : 'message';
    return said(
      `the ${what} of ${tooBig[2]} bytes is over the gRPC message limit of ${tooBig[3]} bytes; a value may have at most 1 MiB`,
    );
  }
  if (e.code === grpc.status.CANCELLED && /Cancelled on client/.test(details))
    return said('the request was cancelled before an answer came');
  return said(details || (e as unknown as Error).message || 'the call failed');
}

/**
 * Whether `e` says the call never reached a node (the name did not resolve, no connection
 * could be made): then another node may take it without it running twice.
 */
export function notReached(e: unknown): boolean {
  if (!isGrpc(e) || e.code !== grpc.status.UNAVAILABLE) return false;
  return /^(Name resolution failed|DNS resolution failed|No connection established|Failed to connect)|ECONNREFUSED|EHOSTUNREACH|ENETUNREACH/.test(
    e.details ?? '',
  );
}

/** `e` as a CliError with its message for `target`, for commands to throw. */
export function failure(e: unknown, target?: CallTarget): CliError {
  return e instanceof CliError ? e : new CliError(describeFailure(e, target));
}
