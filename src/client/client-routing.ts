/**
 * Which nodes a call tries, in order: a token-aware client's ring as last fetched (its
 * replicas of the key first), then the nodes it was given; adaptive, each group ordered
 * by health. The ring is fetched again every `ringRefreshMs` while in use, and soon after
 * a node refused a call; requests do not wait for it.
 *
 * Owns: the ring as last fetched, its fetches, and the turn that spreads calls over the
 * candidates. Must not: send a call (call-attempts.ts does) or judge a node's health
 * (health.ts does).
 */
import type { ClientSecurity } from '../security/credentials.js';
import { AdminClient } from './admin.js';
import type { NodeHealth } from './health.js';
import { KeyRouter } from './key-router.js';

/** What the routing of a client is made of: its settings (ClientOptions) and its view of the nodes' health. */
export interface RoutingOptions {
  readonly nodes: readonly string[];
  readonly tokenAware: boolean;
  readonly ringRefreshMs: number;
  readonly adaptive: boolean;
  /** The client's deadline: a ring fetch waits for the smaller of it and 2 s. */
  readonly deadlineMs: number;
  readonly health: NodeHealth;
  /** What the ring fetches present: the client's credentials. */
  readonly security: ClientSecurity;
}

/** A client's routing: the ring as last fetched, and the order of candidates it gives a key or a batch. */
export class ClientRouting {
  readonly #nodes: readonly string[];
  readonly #o: RoutingOptions;
  readonly #health: NodeHealth;
  #router: KeyRouter | undefined;
  #ringFetchedAt = -Infinity;
  #fetching: Promise<void> | undefined;
  #closed = false;
  /** The turn: each pick of candidates, and each ring fetch, starts one further along. */
  #next = 0;

  /** Routing over `o.nodes`, with no ring until the first fetch. */
  constructor(o: RoutingOptions) {
    this.#o = o;
    this.#nodes = o.nodes;
    this.#health = o.health;
  }

  /**
   * The key's replicas in turn (so load spreads over them), then the given nodes in turn;
   * adaptive, each group ordered by health (NodeHealth.order), else nodes left alone
   * for a while go last. With `leader`, the replicas in preference order instead (those
   * down or unhealthy last): a counter update taken by its issuer makes no extra hop.
   */
  candidates(key: Buffer, leader = false): string[] {
    const turn = this.#next++;
    const replicas = this.#router?.replicasOf(key) ?? [];
    const down = (a: string): boolean => this.#router?.isDown(a) ?? false;
    let mine: string[] = [];
    if (leader) {
      const up = (a: string): boolean => this.#health.healthy(a) && !down(a);
      mine = [...replicas.filter(up), ...replicas.filter((a) => !up(a))];
    } else for (let i = 0; i < replicas.length; i++) mine.push(replicas[(turn + i) % replicas.length]!);
    const others: string[] = [];
    for (let i = 0; i < this.#nodes.length; i++) {
      const a = this.#nodes[(turn + i) % this.#nodes.length]!;
      if (!mine.includes(a)) others.push(a);
    }
    if (this.#o.adaptive) {
      return [...(leader ? mine : this.#health.order(mine, down)), ...this.#health.order(others, down)];
    }
    const out = [...mine, ...others];
    const left = (a: string): boolean => !this.#health.healthy(a);
    return [...out.filter((a) => !left(a)), ...out.filter(left)];
  }

  /**
   * A batch's candidates: the nodes that are replicas of the most of its keys first (each
   * of those keys is then read or written on the node that takes the call, one hop fewer),
   * then the rest; within each, in turn and by health as for one key.
   */
  batchCandidates(keys: readonly Buffer[]): string[] {
    const turn = this.#next++;
    const count = new Map<string, number>();
    for (const k of keys) for (const a of this.#router?.replicasOf(k) ?? []) count.set(a, (count.get(a) ?? 0) + 1);
    const most = Math.max(0, ...count.values());
    const inTurn = (list: readonly string[]): string[] => list.map((_, i) => list[(turn + i) % list.length]!);
    const best = inTurn([...count.keys()].filter((a) => count.get(a) === most));
    const rest = inTurn(
      [...new Set([...[...count.keys()].sort((a, b) => count.get(b)! - count.get(a)!), ...this.#nodes])].filter(
        (a) => !best.includes(a),
      ),
    );
    if (!this.#o.adaptive) return [...best, ...rest];
    const down = (a: string): boolean => this.#router?.isDown(a) ?? false;
    return [...this.#health.order(best, down), ...this.#health.order(rest, down)];
  }

  /** Start fetching the ring when the last fetch is older than ringRefreshMs; requests do not wait for it. */
  refreshIfStale(): void {
    if (
      !this.#o.tokenAware ||
      this.#closed ||
      this.#fetching !== undefined ||
      performance.now() - this.#ringFetchedAt < this.#o.ringRefreshMs
    )
      return;
    this.#fetching = this.#fetchRing().finally(() => {
      this.#fetching = undefined;
      this.#ringFetchedAt = performance.now();
    });
  }

  /** A node refused a call with no retry advice: with a ring, the next call fetches it again. */
  ringMayHaveMoved(): void {
    if (this.#router !== undefined) this.#ringFetchedAt = -Infinity;
  }

  /** Fetch the ring now, and wait for it. */
  async refresh(): Promise<void> {
    this.#ringFetchedAt = -Infinity;
    this.refreshIfStale();
    await this.#fetching;
  }

  /** No more fetches; a fetch under way keeps the old ring. */
  close(): void {
    this.#closed = true;
  }

  /** The ring and members from the first node that answers both (healthy ones first); the old ring stays if none does. */
  async #fetchRing(): Promise<void> {
    const start = this.#next++;
    const inTurn = this.#nodes.map((_, i) => this.#nodes[(start + i) % this.#nodes.length]!);
    for (const address of this.#o.adaptive ? this.#health.order(inTurn) : inTurn) {
      const admin = new AdminClient(address, Math.min(this.#o.deadlineMs, 2000), this.#o.security);
      try {
        const [ring, status] = await Promise.all([admin.ring(), admin.status()]);
        if (!this.#closed) {
          this.#router = new KeyRouter(ring, status);
          this.#health.retain(new Set([...this.#nodes, ...this.#router.addresses()]));
        }
        return;
      } catch {
        // The next node; a cluster still forming has no ring yet.
      } finally {
        admin.close();
      }
    }
  }
}
