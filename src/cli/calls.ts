/**
 * A command's call to a node: a client of `--node` with the CLI's credentials, closed
 * afterwards, and a failure said again in ringkv's words (failures.ts). gRPC and the
 * clients are imported when a call is made, not when the commands are defined.
 *
 * Owns: opening and closing the command's client. Must not: print, or decide anything.
 */

import type { AdminClient } from '../client/admin.js';
import type { Client } from '../client/kv.js';
import { cliSecurity } from './credential-flags.js';

/** Run `fn` with an admin client of the node at `address`. */
export async function withAdmin<T>(address: string, fn: (c: AdminClient) => Promise<T>): Promise<T> {
  const [{ AdminClient }, { failure }] = await Promise.all([import('../client/admin.js'), import('./failures.js')]);
  const c = new AdminClient(address, undefined, cliSecurity());
  try {
    return await fn(c);
  } catch (e) {
    throw failure(e, { address });
  } finally {
    c.close();
  }
}

/** Run `fn` with a key/value client of `o.node`, its calls given `o.deadlineMs` (--deadline-ms). */
export async function withClient<T>(o: { node: string; deadlineMs: number }, fn: (c: Client) => Promise<T>): Promise<T> {
  // One request: the node given coordinates it (fetching the ring first would cost more than the hop it saves).
  const [{ Client }, { failure }] = await Promise.all([import('../client/kv.js'), import('./failures.js')]);
  const c = new Client({ nodes: [o.node], deadlineMs: o.deadlineMs, tokenAware: false, ...cliSecurity() });
  try {
    return await fn(c);
  } catch (e) {
    throw failure(e, { address: o.node, deadlineMs: o.deadlineMs, deadlineFlag: '--deadline-ms' });
  } finally {
    c.close();
  }
}
