/**
 * Checks of option values the commands share, as commander argument parsers: a bad value
 * is refused before anything is called, saying what was wrong and what to pass; and the
 * node the commands call unless --node says otherwise.
 */
import { InvalidArgumentError } from 'commander';
import { isAddress } from '../membership/endpoint.js';
import { parseDuration } from '../buckets/index.js';

/** The node a command acts on (decommission, repair, ...) unless --node says otherwise. */
export const DEFAULT_NODE = process.env.RINGKV_NODE || '127.0.0.1:7001';

/** The nodes a command that any node can serve tries, in turn, unless --node says otherwise: a driver's contact points. */
export const DEFAULT_NODES = process.env.RINGKV_NODES || DEFAULT_NODE;

/** --node of a command any node can serve. */
export const ANY_NODE_HELP =
  'any node of the cluster; several, comma-separated, are tried in turn while one does not answer (RINGKV_NODES, RINGKV_NODE)';

/** `--node host:port`: a host (name, IPv4, or [IPv6]) and a port from 1 to 65535, as gossip takes addresses. */
export function nodeAddress(value: string): string {
  if (isAddress(value)) return value;
  // A host that would be an address with a port: the port is what is missing.
  if (isAddress(`${value}:1`))
    throw new InvalidArgumentError(
      `expected host:port, got "${value}" with no port: a node's gRPC port (ringkv local uses 7001-7003), like ${value}:7001`,
    );
  throw new InvalidArgumentError(`expected host:port (like 127.0.0.1:7001 or [::1]:7001), got "${value}"`);
}

/** `--node a:1,b:2`: one host:port or several, comma-separated, each checked as nodeAddress does. */
export function nodeAddresses(value: string): string {
  return value
    .split(',')
    .map((a) => a.trim())
    .filter((a) => a !== '')
    .map(nodeAddress)
    .join(',');
}

/** A whole number from 1 to `max`. */
export function positiveInt(max: number) {
  return (value: string): number => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < 1 || n > max) {
      throw new InvalidArgumentError(`expected a whole number from 1 to ${max}, got "${value}"`);
    }
    return n;
  };
}

/** A duration with its unit (ms, s, m, h, d), like 30s or 7d; 0 for none. A bare number is refused: it does not say its unit. */
export function duration(value: string): number {
  const ms = parseDuration(value);
  if (typeof ms === 'string') throw new InvalidArgumentError(`the value ${ms}`);
  return ms;
}

/** A whole number from 0 to `max` (0: a default chosen elsewhere). */
export function wholeNumber(max: number) {
  return (value: string): number => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < 0 || n > max)
      throw new InvalidArgumentError(`expected a whole number from 0 to ${max}, got "${value}"`);
    return n;
  };
}
