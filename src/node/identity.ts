/**
 * What a node keeps about itself in its data dir (node.json): id, cluster name, the last
 * generation, its tokens and status. A restart keeps the id and tokens and takes a new,
 * larger generation; a wiped data dir is a new node with a new id (riak_test kv679: a node
 * that lost its data must not come back as the node that had it).
 *
 * Owns: the file, written atomically (temp file, fsync, rename, fsync of the directory).
 * Must not: decide tokens or status (the node does).
 */

import { randomBytes } from 'node:crypto';
import { mkdir, open, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  isAddress,
  parseHeirs,
  parseTokens,
  formatTokens,
  NODE_STATUSES,
  type EndpointState,
  type NodeStatus,
  type Versioned,
} from '../membership/endpoint.js';
import { ConfigError } from './config.js';

export interface Identity {
  readonly id: string;
  readonly clusterName: string;
  readonly generation: number;
  readonly tokens: readonly bigint[] | undefined;
  readonly status: NodeStatus;
  /**
   * Id of the topology change this node drives (its join claim, its decommission), so
   * that progress kept under it (transfers.json) survives a restart; undefined when none.
   */
  readonly move: string | undefined;
  /** A node this node is removing (ringkv removenode), until the removal is done. */
  readonly removing: string | undefined;
  /** Nodes this node has removed: gossiped, so that no one counts them as members again. */
  readonly removed: readonly string[];
  /** The dead node this one replaces (ringkv node --replace), until it is normal. */
  readonly replaces: string | undefined;
  /** A standby (--join manual) that an operator admitted (ringkv commit): it joins. */
  readonly admitted: boolean;
  /**
   * The `heirs` gossip field: who inherits each token of this node when it decommissions,
   * or of the nodes it removes (membership/ring-view.ts); '' when none.
   */
  readonly heirs: string;
}

/** What the node changes of its identity as it runs (id, cluster name and generation are fixed). */
export type IdentityChange = Partial<
  Pick<Identity, 'tokens' | 'status' | 'move' | 'removing' | 'removed' | 'replaces' | 'admitted' | 'heirs'>
>;

const FILE = 'node.json';

/**
 * Load the identity in `dir` (or make a new one), check it against the configured id and
 * cluster name, and take the next generation: wall-clock seconds, and always more than
 * the last one, so peers see a restart even across a clock step back.
 */
export async function loadIdentity(
  dir: string,
  want: { id: string | undefined; clusterName: string },
  nowMs: number,
): Promise<Identity> {
  await mkdir(dir, { recursive: true });
  const path = join(dir, FILE);
  const bad = (what: string): never => {
    throw new ConfigError(
      `${path} is damaged (${what}); restore it from a backup, or move the data dir away to start a new node`,
    );
  };
  const json = await readJsonFile(dir, FILE, bad);
  const saved = json === undefined ? undefined : parse(json, bad);
  const seconds = Math.floor(nowMs / 1000);
  if (saved === undefined) {
    const id = want.id ?? `n-${randomBytes(6).toString('hex')}`;
    return {
      id,
      clusterName: want.clusterName,
      generation: seconds,
      tokens: undefined,
      status: 'joining',
      move: undefined,
      removing: undefined,
      removed: [],
      replaces: undefined,
      admitted: false,
      heirs: '',
    };
  }
  if (want.id !== undefined && want.id !== saved.id) {
    throw new ConfigError(
      `data dir ${dir} belongs to node ${saved.id}, not ${want.id}: start with --id ${saved.id}, or give a new node an empty data dir`,
    );
  }
  if (want.clusterName !== saved.clusterName) {
    throw new ConfigError(
      `data dir ${dir} belongs to cluster "${saved.clusterName}", not "${want.clusterName}": start with --cluster-name ${saved.clusterName}, or use an empty data dir`,
    );
  }
  if (saved.status === 'left') {
    // The cluster forgot this node's tokens when it left; its id is a tombstone in gossip.
    // Coming back under it would sit as a member that never joins.
    throw new ConfigError(
      `node ${saved.id} decommissioned and left the cluster (${path} says status left): it cannot serve or rejoin from this data dir; start a new node with a new id and an empty data dir, or move ${dir} away`,
    );
  }
  return { ...saved, generation: Math.max(saved.generation + 1, seconds) };
}

export async function saveIdentity(dir: string, identity: Identity): Promise<void> {
  const body = JSON.stringify(
    {
      id: identity.id,
      clusterName: identity.clusterName,
      generation: identity.generation,
      tokens: identity.tokens === undefined ? null : formatTokens(identity.tokens),
      status: identity.status,
      move: identity.move ?? null,
      removing: identity.removing ?? null,
      removed: identity.removed,
      replaces: identity.replaces ?? null,
      admitted: identity.admitted,
      heirs: identity.heirs,
    },
    null,
    2,
  );
  await writeAtomically(dir, FILE, `${body}\n`);
}

/**
 * The JSON in `dir`/`name`, or undefined when there is no such file; text that is not JSON
 * throws `damaged('not JSON')`, so that the file's owner says what to do about it.
 */
export async function readJsonFile(dir: string, name: string, damaged: (what: string) => never): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(join(dir, name), 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return damaged('not JSON');
  }
}

let tmpSeq = 0;

/**
 * Write `dir`/`name` atomically: temp file, fsync, rename, fsync of the directory. Each
 * call has a temp file of its own, so two writes at once never share one (the later
 * rename wins whole); callers that need the later call to win serialize their writes.
 */
export async function writeAtomically(dir: string, name: string, text: string): Promise<void> {
  const path = join(dir, name);
  const tmp = `${path}.${process.pid}-${tmpSeq++}.tmp`;
  const f = await open(tmp, 'w');
  try {
    await f.writeFile(text);
    await f.sync();
  } finally {
    await f.close();
  }
  await rename(tmp, path);
  const d = await open(dir, 'r');
  try {
    await d.sync();
  } finally {
    await d.close();
  }
}

function parse(json: unknown, bad: (what: string) => never): Identity {
  if (json === null || typeof json !== 'object') bad('not an object');
  const j = json as Record<string, unknown>;
  const { id, clusterName, generation, tokens, status, move, removing, removed, replaces, admitted, heirs } = j;
  const optionalId = (v: unknown): string | undefined => (typeof v === 'string' && v.length > 0 ? v : undefined);
  if (typeof id !== 'string' || id.length === 0) bad('no id');
  if (typeof clusterName !== 'string') bad('no clusterName');
  if (typeof generation !== 'number' || !Number.isSafeInteger(generation) || generation < 0) bad('bad generation');
  if (!(NODE_STATUSES as readonly unknown[]).includes(status)) bad('bad status');
  if (move !== undefined && move !== null && typeof move !== 'string') bad('bad move');
  if (removed !== undefined && !(Array.isArray(removed) && removed.every((x) => typeof x === 'string')))
    bad('bad removed');
  if (heirs !== undefined && (typeof heirs !== 'string' || parseHeirs(heirs) === undefined)) bad('bad heirs');
  let parsed: bigint[] | undefined;
  if (tokens !== null) {
    parsed = typeof tokens === 'string' ? parseTokens(tokens) : undefined;
    if (parsed === undefined) bad('bad tokens');
  }
  return {
    id: id as string,
    clusterName: clusterName as string,
    generation: generation as number,
    tokens: parsed,
    status: status as NodeStatus,
    move: optionalId(move),
    removing: optionalId(removing),
    removed: (removed as string[] | undefined) ?? [],
    replaces: optionalId(replaces),
    admitted: admitted === true,
    heirs: (heirs as string | undefined) ?? '',
  };
}

const MEMBERS_FILE = 'members.json';
/** What ringkv 0.1 kept before members.json: peer addresses only. */
const PEERS_FILE = 'peers.json';

interface SavedState {
  id: string;
  generation: number;
  heartbeat: number;
  fields: [string, string, number][];
}

/**
 * The member table this node learnt by gossip (every other member's state, versioned),
 * so that a restart starts from it: a member that is down keeps its tokens and shows as
 * down (Cassandra keeps system.peers for the same reason). A missing or damaged file
 * means the node learns the table again from its seeds; states the gossiper's checks
 * refuse are dropped when it loads them.
 */
export async function loadMembers(dir: string): Promise<EndpointState[]> {
  let j: unknown;
  try {
    j = JSON.parse(await readFile(join(dir, MEMBERS_FILE), 'utf8'));
  } catch {
    return [];
  }
  if (!Array.isArray(j)) return [];
  const out: EndpointState[] = [];
  for (const x of j as SavedState[]) {
    if (x === null || typeof x !== 'object' || typeof x.id !== 'string' || !Array.isArray(x.fields)) continue;
    const fields = new Map<string, Versioned>();
    let version = Number(x.heartbeat) || 0;
    for (const f of x.fields) {
      if (!Array.isArray(f) || typeof f[0] !== 'string' || typeof f[1] !== 'string' || !Number.isSafeInteger(f[2]))
        continue;
      fields.set(f[0], { value: f[1], version: f[2] });
      version = Math.max(version, f[2]);
    }
    if (!Number.isSafeInteger(x.generation) || !Number.isSafeInteger(x.heartbeat)) continue;
    out.push({ id: x.id, generation: x.generation, heartbeat: x.heartbeat, fields, version });
  }
  return out;
}

export async function saveMembers(dir: string, states: Iterable<EndpointState>): Promise<void> {
  const body: SavedState[] = [];
  for (const s of states)
    body.push({
      id: s.id,
      generation: s.generation,
      heartbeat: s.heartbeat,
      fields: [...s.fields].map(([n, f]) => [n, f.value, f.version]),
    });
  const path = join(dir, MEMBERS_FILE);
  await writeFile(`${path}.tmp`, JSON.stringify(body));
  await rename(`${path}.tmp`, path);
}

/**
 * Addresses of the peers a ringkv 0.1 node knew (peers.json, before members.json), so
 * that such a node still announces itself to all of them at once after an upgrade.
 * Advisory: a missing or damaged file only means the node finds its peers through seeds.
 */
export async function loadPeers(dir: string): Promise<string[]> {
  try {
    const j = JSON.parse(await readFile(join(dir, PEERS_FILE), 'utf8')) as unknown;
    return Array.isArray(j) ? j.filter((a): a is string => typeof a === 'string' && isAddress(a)) : [];
  } catch {
    return [];
  }
}
