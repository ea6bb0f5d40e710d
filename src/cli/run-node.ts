/**
 * `ringkv node`: run one node until SIGTERM or SIGINT, then stop it cleanly and exit 0;
 * SIGHUP reloads its credentials (security/node-security.ts).
 */

import pino from 'pino';
import { resolveConfig, type NodeConfig } from '../node/config.js';
import { RingkvNode } from '../node/node.js';

export async function runNode(
  flags: Partial<Record<keyof NodeConfig, unknown>>,
  configFile: string | undefined,
): Promise<void> {
  const config = resolveConfig(flags, process.env, configFile);
  const log = pino({ level: config.logLevel, base: { pid: process.pid } });
  const node = await RingkvNode.start(config, log);
  let first: number | undefined;
  const onSignal = (signal: NodeJS.Signals): void => {
    // A second signal forces the exit; one within 500 ms is the same request sent twice
    // (a terminal's Ctrl-C reaches the whole process group, `timeout` signals it too).
    if (first !== undefined) {
      if (Date.now() - first < 500) return;
      node.log.warn({ signal }, 'second signal: exiting now');
      process.exit(1);
    }
    first = Date.now();
    node.log.info({ signal }, 'stopping');
    node.stop().catch((e: unknown) => {
      node.log.error({ err: e }, 'stop failed');
      process.exit(1);
    });
  };
  // Exit once stopped: 0 after a signal, 1 when the node stopped itself on a fatal error.
  void node.stopped.then(() => process.exit(node.failure ? 1 : 0));
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  // SIGHUP: read the TLS files and the admin token again (a new certificate, a rotated token).
  process.on('SIGHUP', () => {
    node.log.info('SIGHUP: reloading credentials');
    node.security.reload();
  });
}
