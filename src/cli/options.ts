/**
 * Checks of option values the commands share, as commander argument parsers: a bad value
 * is refused before anything is called, saying what was wrong and what to pass.
 */
import { InvalidArgumentError } from 'commander';
import { isAddress } from '../membership/endpoint.js';

/** `--node host:port`: a host (name, IPv4, or [IPv6]) and a port from 1 to 65535, as gossip takes addresses. */
export function nodeAddress(value: string): string {
  if (isAddress(value)) return value;
  // A host that would be an address with a port: the port is what is missing.
  if (isAddress(`${value}:1`)) throw new InvalidArgumentError(`expected host:port, got "${value}" with no port: a node's gRPC port (ringkv local uses 7001-7003), like ${value}:7001`);
  throw new InvalidArgumentError(`expected host:port (like 127.0.0.1:7001 or [::1]:7001), got "${value}"`);
}
