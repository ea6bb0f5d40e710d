/**
 * Checks of option values the commands share, as commander argument parsers: a bad value
 * is refused before anything is called, saying what was wrong and what to pass; and the
 * node the commands call unless --node says otherwise.
 */
import { InvalidArgumentError } from 'commander';
import { isAddress } from '../membership/endpoint.js';
import { parseDuration } from '../client/duration.js';

/** The node the client commands talk to unless --node says otherwise. */
export const DEFAULT_NODE = process.env.RINGKV_NODE || '127.0.0.1:7001';

/** `--node host:port`: a host (name, IPv4, or [IPv6]) and a port from 1 to 65535, as gossip takes addresses. */
export function nodeAddress(value: string): string {
  if (isAddress(value)) return value;
  // A host that would be an address with a port: the port is what is missing.
  if (isAddress(`${value}:1`)) throw new InvalidArgumentError(`expected host:port, got "${value}" with no port: a node's gRPC port (ringkv local uses 7001-7003), like ${value}:7001`);
  throw new InvalidArgumentError(`expected host:port (like 127.0.0.1:7001 or [::1]:7001), got "${value}"`);
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
    if (!Number.isInteger(n) || n < 0 || n > max) throw new InvalidArgumentError(`expected a whole number from 0 to ${max}, got "${value}"`);
    return n;
  };
}
