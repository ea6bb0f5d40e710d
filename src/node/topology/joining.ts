/**
 * Driving this node's join: each gossip round it asks the join state machine
 * (cluster/join.ts) for the next steps and takes them until it waits: shows itself
 * after the shadow round, claims tokens (or withdraws a claim another change goes before),
 * streams the ranges its claim gains, and turns normal. Also an operator's admit of a
 * standby (--join manual), and the goodbye of a joiner stopped before it became normal.
 *
 * Owns: the join's clocks (when it started, when tokens were picked, when another change
 * was last seen) and the background pull of its ranges. Must not: decide a step
 * (cluster/join.ts does), write node.json (persist does) or stop the node (fail does).
 */
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { Logger } from 'pino';
import type { Gossiper } from '../../membership/gossiper.js';
import { formatTokens } from '../../membership/endpoint.js';
import type { RingView } from '../../membership/ring-view.js';
import { describeMovement, nextJoinStep, type JoinStep } from '../../cluster/join.js';
import type { NodeConfig } from '../config.js';
import type { Handoff } from '../handoff.js';
import type { Identity, IdentityChange } from '../identity.js';
import { MovementRefused } from './movement-driver.js';

/** Join steps taken in one run at most (a claim is followed at once by the next step). */
const STEPS_PER_RUN = 3;

export interface JoiningDeps {
  readonly config: Pick<
    NodeConfig,
    'clusterName' | 'zone' | 'rack' | 'weight' | 'tokens' | 'replicas' | 'gossipIntervalMs' | 'replace' | 'join'
  >;
  readonly gossiper: Gossiper;
  readonly handoff: Pick<Handoff, 'pulled' | 'pullsOf' | 'pullOwn'>;
  identity(): Identity;
  persist(change: IdentityChange): Promise<void>;
  view(): RingView;
  /** Log the gossiper's events and republish the view, after a field of ours changed. */
  afterGossip(): void;
  /** Tell every peer our state now; settles once they have it, or after a second at most. */
  announce(): Promise<void>;
  /** Stop the node for good, with this reason. */
  fail(err: Error): void;
  /** Health follows our status: called once we are normal. */
  updateHealth(): void;
  /** Is the node stopping? */
  closing(): boolean;
  /** Bytes the disk takes before the store refuses writes (free above its floor); undefined: not known yet. */
  room(): number | undefined;
  readonly log: Logger;
}

export class Joining {
  readonly #startedAt = performance.now();
  /** When our tokens were picked (or the node started, for tokens from node.json). */
  #tokensSince = performance.now();
  /** When this node last saw another node's topology change in progress (or started). */
  #busySince = performance.now();
  #running = false;
  /** The pull of our join's ranges, while it runs. */
  #bootstrap: Promise<void> | undefined;
  #lastReason = '';
  readonly #log: Logger;

  constructor(private readonly deps: JoiningDeps) {
    this.#log = deps.log.child({ component: 'join' });
  }

  /** Take the join state machine's steps until it waits. One run a gossip round; nothing unless joining. */
  async step(): Promise<void> {
    const { deps } = this;
    if (deps.identity().status !== 'joining' || this.#running || deps.closing()) return;
    this.#running = true;
    try {
      for (let i = 0; i < STEPS_PER_RUN && deps.identity().status === 'joining' && !deps.closing(); i++) {
        const move = deps.identity().move;
        if (!(await this.#take(this.#next(move), move))) return;
      }
    } catch (e) {
      deps.log.error({ component: 'join', err: e }, 'join step failed; retrying next round');
    } finally {
      this.#running = false;
    }
  }

  /** Admit this standby (--join manual): it joins now. */
  async admit(): Promise<{ move: string; message: string }> {
    const { deps } = this;
    const { id, status, admitted } = deps.identity();
    if (status !== 'joining') throw new MovementRefused(`${id} is ${status}: only a joining standby can be admitted`);
    if (deps.config.join !== 'manual' || admitted) return { move: '', message: `${id} is joining already` };
    await deps.persist({ admitted: true });
    deps.gossiper.set('standby', 'false');
    deps.afterGossip();
    deps.log.info({ component: 'join' }, 'admitted by an operator: joining');
    void this.step();
    return { move: '', message: `${id} admitted: it joins now` };
  }

  /** On stop: let the pull of our ranges settle; a node still joining then leaves (see #leaveUnjoined). */
  async stop(): Promise<void> {
    await this.#bootstrap?.catch(() => undefined);
    if (this.deps.identity().status === 'joining') await this.#leaveUnjoined();
  }

  /** The next step, from what this node knows now. */
  #next(move: string | undefined): JoinStep {
    const { config, gossiper, handoff } = this.deps;
    const identity = this.deps.identity();
    const view = this.deps.view();
    if (view.movements.some((m) => m.node !== identity.id)) this.#busySince = performance.now();
    return nextJoinStep({
      self: { id: identity.id, zone: config.zone, rack: config.rack, weight: config.weight },
      clusterName: config.clusterName,
      tokensPerNode: config.tokens,
      replicas: config.replicas,
      intervalMs: config.gossipIntervalMs,
      waitedMs: performance.now() - this.#startedAt,
      quietMs: performance.now() - this.#busySince,
      tokens: identity.tokens,
      tokensAgeMs: performance.now() - this.#tokensSince,
      gossip: gossiper,
      view,
      streamed: move !== undefined && handoff.pulled(view, move),
      replaces: identity.replaces ?? config.replace,
      standby: config.join === 'manual' && !identity.admitted,
      room: this.deps.room(),
    });
  }

  /** Take one step; true when the state machine is to be asked again at once. */
  async #take(step: JoinStep, move: string | undefined): Promise<boolean> {
    const { deps } = this;
    switch (step.kind) {
      case 'wait': {
        // Logged when the reason changes; not when only the disk's figures do (free space moves every second).
        const reason = step.reason.startsWith('not enough disk') ? step.reason.replace(/[\d.]+/g, '#') : step.reason;
        if (reason !== this.#lastReason) this.#log.info({ reason: step.reason }, 'joining: waiting');
        this.#lastReason = reason;
        return false;
      }
      case 'fail':
        deps.fail(new Error(step.message));
        return false;
      case 'show':
        deps.gossiper.endShadow();
        void deps.announce();
        this.#log.info('shadow round over: no member has this id; showing this node to the cluster');
        return false;
      case 'claim':
        await this.#claim(step);
        return true;
      case 'withdraw':
        await this.#withdraw();
        this.#log.info(
          { first: describeMovement(step.first) },
          'another topology change goes first: claim withdrawn, joining after it',
        );
        return false;
      case 'stream':
        this.#startBootstrap(move!);
        return false;
      case 'normal': {
        const removed =
          step.replaced === undefined ? undefined : [...new Set([...deps.identity().removed, step.replaced])];
        await deps.persist({ status: 'normal', move: undefined, ...(removed === undefined ? {} : { removed }) });
        if (removed !== undefined) deps.gossiper.set('removed', removed.join(','));
        deps.gossiper.set('status', 'normal');
        this.#log.info({ reason: step.reason }, 'joined: status normal');
        deps.afterGossip();
        deps.updateHealth();
        return false;
      }
    }
  }

  /** Persist and gossip the tokens picked (with whom we replace, if anyone). */
  async #claim(step: Extract<JoinStep, { kind: 'claim' }>): Promise<void> {
    const { deps } = this;
    if (step.clash !== undefined)
      this.#log.warn({ peer: step.clash }, 'a token of ours is claimed by another member first: picking new tokens');
    // A new move id each claim: ranges pulled for an earlier claim missed the writes since.
    const id = deps.identity().id;
    await deps.persist({
      tokens: step.tokens,
      move: `join-${id}-${randomBytes(6).toString('hex')}`,
      replaces: deps.identity().replaces ?? deps.config.replace,
    });
    this.#tokensSince = performance.now();
    // Whom we replace goes with the claim: peers must never see the dead node's tokens claimed as a join.
    const replaces = deps.identity().replaces;
    if (replaces !== undefined) deps.gossiper.set('replaces', replaces);
    deps.gossiper.set('tokens', formatTokens(step.tokens));
    deps.afterGossip();
    this.#log.info(
      { tokens: step.tokens.length, alone: step.alone },
      step.alone ? 'no seed answered: forming a new cluster' : 'tokens picked',
    );
  }

  /** Give up our token claim: gossip no tokens, forget them and the move. */
  async #withdraw(): Promise<void> {
    await this.deps.persist({ tokens: undefined, move: undefined });
    this.deps.gossiper.set('tokens', '');
    this.deps.afterGossip();
  }

  /** Pull the ranges our claim gains, in the background; the next join step sees the result. */
  #startBootstrap(move: string): void {
    if (this.#bootstrap !== undefined) return;
    const { deps } = this;
    const log = this.#log;
    const started = performance.now();
    const view = deps.view();
    const ranges = deps.handoff.pullsOf(view, deps.identity().id).length;
    log.info({ ranges, move }, 'streaming the ranges this node gains');
    this.#bootstrap = deps.handoff
      .pullOwn(view, move)
      .then(
        (r) => {
          log.info(
            { ranges, keys: r.keys, copied: r.copied, bytes: r.bytes, ms: Math.round(performance.now() - started) },
            'ranges streamed',
          );
          void this.step();
        },
        (e: unknown) => {
          if (!deps.closing())
            log.warn({ err: (e as Error)?.message ?? String(e) }, 'streaming failed; retrying next round');
        },
      )
      .finally(() => (this.#bootstrap = undefined));
  }

  /**
   * A joiner stopped before it became normal gives up its claim and tells the cluster it
   * left, so that it blocks no other topology change and shows in no status as a joiner
   * that never comes. Started again, it joins afresh (node.json still says joining).
   * (Killed with SIGKILL it cannot: it stays a pending joiner until it restarts, or an
   * operator removes it.)
   */
  async #leaveUnjoined(): Promise<void> {
    const { deps } = this;
    try {
      if (deps.identity().tokens !== undefined) await deps.persist({ tokens: undefined, move: undefined });
      if (deps.gossiper.self.fields.has('tokens')) deps.gossiper.set('tokens', '');
      deps.gossiper.set('status', 'left');
      await deps.announce();
      deps.log.info('stopped before joining: told the cluster this node left; it joins afresh when started again');
    } catch (e) {
      deps.log.warn({ err: e }, 'could not tell the cluster this joiner left');
    }
  }
}
