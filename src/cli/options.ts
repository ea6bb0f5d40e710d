/**
 * Checks of option values the commands share, as commander argument parsers: a bad value
 * is refused before anything is called, saying what was wrong and what to pass.
 */
import { InvalidArgumentError } from 'commander';

/** `--node host:port`: a host (name, IPv4, or [IPv6]) and a port from 1 to 65535. */
export function nodeAddress(value: string): string {
  const m = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.\-_]+):(\d{1,5})$/.exec(value);
  if (m !== null && Number(m[2]) >= 1 && Number(m[2]) <= 65_535) return value;
  if (/^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.\-_]+)$/.test(value)) throw new InvalidArgumentError(`expected host:port, got "${value}" with no port: a node's gRPC port (ringkv local uses 7001-7003), like ${value}:7001`);
  throw new InvalidArgumentError(`expected host:port (like 127.0.0.1:7001 or [::1]:7001), got "${value}"`);
}
