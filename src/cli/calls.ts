/**
 * A command's call to a node: a client of `--node` with the CLI's credentials, closed
 * afterwards, and a failure said again in ringkv's words (failures.ts). `--node` may name
 * several nodes, comma-separated (a driver's contact points): a call goes to the next
 * when one cannot be reached. gRPC and the clients are imported when a call is made, not
 * when the commands are defined.
 *
 * Owns: opening and closing the command's client, and moving on to the next node. Must
 * not: print, or decide anything.
 */

import type { AdminClient } from '../client/admin.js';
import type { Client } from '../client/kv.js';
import { cliSecurity } from './credential-flags.js';

/**
 * Run `fn` with an admin client of the node at `addresses` (one host:port, or several
 * comma-separated: the next is tried while a node cannot be reached, so no call ran there).
 */
export async function withAdmin<T>(addresses: string, fn: (c: AdminClient) => Promise<T>): Promise<T> {
  const [{ AdminClient }, { failure, notReached }] = await Promise.all([
    import('../client/admin.js'),
    import('./failures.js'),
  ]);
  const list = addresses.split(',');
  for (const [i, address] of list.entries()) {
    const c = new AdminClient(address, undefined, cliSecurity());
    try {
      return await fn(c);
    } catch (e) {
      if (i < list.length - 1 && notReached(e)) continue;
      throw failure(e, { address: list.length > 1 && notReached(e) ? list.join(', ') : address });
    } finally {
      c.close();
    }
  }
  throw new Error('no node given'); // nodeAddresses gives at least one
}

/** Run `fn` with a key/value client of `o.node` (one node or several, tried in turn), its calls given `o.deadlineMs` (--deadline-ms). */
export async function withClient<T>(
  o: { node: string; deadlineMs: number },
  fn: (c: Client) => Promise<T>,
): Promise<T> {
  // One request: the node given coordinates it (fetching the ring first would cost more than the hop it saves).
  const [{ Client }, { failure }] = await Promise.all([import('../client/kv.js'), import('./failures.js')]);
  const nodes = o.node.split(',');
  const c = new Client({ nodes, deadlineMs: o.deadlineMs, tokenAware: false, adaptive: false, ...cliSecurity() });
  try {
    return await fn(c);
  } catch (e) {
    throw failure(e, { address: nodes.join(', '), deadlineMs: o.deadlineMs, deadlineFlag: '--deadline-ms' });
  } finally {
    c.close();
  }
}
