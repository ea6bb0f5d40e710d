/**
 * The topology as this node sees it: the view (membership/ring-view.ts) of the member
 * states the gossiper holds, rebuilt only when ownership changed, and put in force: the
 * coordinator's placement, the `topo` hash peers read, and every ring subscriber.
 *
 * Owns: the view and placement in force, and the subscribers. Must not: decide ownership
 * (ring-view.ts does) or stop the node itself (fail does, once this node is removed).
 */
import type { Logger } from 'pino';
import type { Ring } from '../../ring/index.js';
import type { Gossiper } from '../../membership/gossiper.js';
import { ringFingerprint, ringFromStates, type RingView } from '../../membership/ring-view.js';
import { describeMovement } from '../../cluster/join.js';
import type { Placement } from '../../replication/coordinator.js';

export interface TopologyViewDeps {
  readonly id: string;
  readonly clusterName: string;
  readonly tokensPerNode: number;
  readonly gossiper: Pick<Gossiper, 'states' | 'set' | 'revision'>;
  /** Is the node stopping? */
  closing(): boolean;
  /** Stop the node for good, with this reason (it was removed from the cluster). */
  fail(err: Error): void;
  /** A new view is in force (before subscribers hear of it). */
  changed(): void;
  readonly log: Logger;
}

export class TopologyView {
  #view: RingView = {
    ring: undefined,
    target: undefined,
    movements: [],
    removed: new Set(),
    conflicts: [],
    fingerprint: '',
    hash: '',
  };
  #placement: Placement | undefined;
  /** The gossiper's revision the view was last checked at. */
  #revision = -1;
  /** What the ring in force is made of, so subscribers hear of ring changes only (not of claims or movements). */
  #ringKey = '';
  readonly #listeners = new Set<(ring: Ring | undefined) => void>();

  constructor(private readonly deps: TopologyViewDeps) {}

  /** The view in force (immutable; a change is a new one). */
  get current(): RingView {
    return this.#view;
  }

  /** Where the coordinator places keys: the ring, and the target ring while ranges move. */
  get placement(): Placement | undefined {
    return this.#placement;
  }

  /** Be told of every new ring; returns an unsubscribe function. */
  subscribe(listener: (ring: Ring | undefined) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Rebuild the view if ownership changed since, and put it in force. */
  update(): void {
    const { deps } = this;
    // Nothing to check while no state changed (heartbeats are most of gossip). The fingerprint
    // is cheap; building a ring is not (80 ms at 1,000 nodes): build only on change.
    if (deps.gossiper.revision === this.#revision) return;
    this.#revision = deps.gossiper.revision;
    if (ringFingerprint(deps.gossiper.states()) === this.#view.fingerprint) return;
    const view = ringFromStates(deps.gossiper.states(), { tokensPerNode: deps.tokensPerNode });
    this.#view = view;
    if (view.removed.has(deps.id) && !deps.closing()) {
      deps.fail(
        new Error(
          `node ${deps.id} was removed from cluster ${deps.clusterName} (ringkv removenode or a replacement): it must not serve its old ranges. To bring this machine back, move its data dir away and start it as a new node`,
        ),
      );
      return;
    }
    this.#placement = view.ring === undefined ? undefined : { ring: view.ring, target: view.target ?? view.ring };
    // Peers read this to know that we write to the pending ranges of this view.
    deps.gossiper.set('topo', view.hash);
    deps.changed();
    for (const c of view.conflicts) {
      deps.log.warn(
        { component: 'ring', peer: c.id, token: c.token.toString(16), owner: c.owner },
        'member left out of the ring: a token of it is already owned',
      );
    }
    deps.log.info(
      {
        component: 'ring',
        owners: view.ring?.size ?? 0,
        tokens: view.ring?.tokens.length ?? 0,
        movements: view.movements.map(describeMovement),
        topo: view.hash,
      },
      'ring changed',
    );
    const ringKey =
      view.ring?.members.map((m) => `${m.id}:${m.zone}:${m.rack}:${m.weight}:${m.tokens.join(',')}`).join('|') ?? '';
    if (ringKey === this.#ringKey) return;
    this.#ringKey = ringKey;
    for (const l of this.#listeners) {
      try {
        l(view.ring);
      } catch (e) {
        deps.log.error({ err: e }, 'ring subscriber failed');
      }
    }
  }
}
