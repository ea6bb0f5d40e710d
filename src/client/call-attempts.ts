/**
 * A call's attempts, as the client's tail tolerance sends them (docs/client.md): the first
 * to the first candidate; the next candidate when a node refuses (UNAVAILABLE, retry
 * advice) and no other attempt is out; a hedge to the next candidate once the hedge delay
 * passes with no answer (a token from the budget each); a move to the next candidate
 * when every attempt out is on a node that stopped answering (once). The first answer
 * wins. A compare-and-set's attempts are the failovers alone, one at a time.
 *
 * Owns: when each attempt is sent, what ends a call, and the figures and health each
 * attempt adds to. Must not: pick the candidates (client-routing.ts) or shape a request
 * (kv-requests.ts).
 */
import * as grpc from '@grpc/grpc-js';
import type { KvReply } from '../transport/kv-codec.js';
import { CAS_OUTCOME } from '../transport/status.js';
import type { ClientStats, PutIfResult } from './client-types.js';
import type { Ending, NodeHealth } from './health.js';
import type { HedgeDelay, RetryBudget } from './hedging.js';
import { NO_NODE_TRIED, answerOf, casNotApplied, type Request } from './kv-requests.js';

/** How long a node that answered UNAVAILABLE goes to the back of the order, ms. */
const AVOID_UNAVAILABLE_MS = 1000;

/**
 * Statuses any node would answer the same: a call that got one ends with it at once,
 * even while another attempt is out. Others (DEADLINE_EXCEEDED, INTERNAL, ...) end it only
 * once no attempt is left.
 */
const FINAL = new Set([
  grpc.status.INVALID_ARGUMENT,
  grpc.status.FAILED_PRECONDITION,
  grpc.status.NOT_FOUND,
  grpc.status.ALREADY_EXISTS,
  grpc.status.OUT_OF_RANGE,
  grpc.status.UNAUTHENTICATED,
  grpc.status.PERMISSION_DENIED,
  grpc.status.UNIMPLEMENTED,
  grpc.status.RESOURCE_EXHAUSTED,
]);

/**
 * How long a node that refused a call asked to be left alone, ms, or undefined when the
 * refusal is no reason to try another node. Only a node's limits answer RESOURCE_EXHAUSTED
 * with retry advice (`grpc-retry-pushback-ms`), before doing any of the call, so sending
 * it elsewhere cannot apply it twice. Without the advice (a message over gRPC's size cap),
 * or with advice that is not a count of ms (gRPC: do not retry), another node would refuse
 * it too.
 */
export function pushbackMs(e: grpc.ServiceError): number | undefined {
  if (e.code !== grpc.status.RESOURCE_EXHAUSTED) return undefined;
  const v = e.metadata?.get('grpc-retry-pushback-ms')[0];
  return typeof v === 'string' && /^\d{1,9}$/.test(v) ? Number(v) : undefined;
}

/** What a call's attempts use of their client: its figures, its budget and its view of the nodes. */
export interface AttemptContext {
  /** The client's counts: each call, attempt, hedge, move and failover is added here. */
  readonly stats: ClientStats;
  readonly budget: RetryBudget;
  readonly health: NodeHealth;
  /** Whether a call is moved off nodes that stopped answering (ClientOptions.adaptive). */
  readonly adaptive: boolean;
  readonly stallMs: number;
  /** A node refused a call with no retry advice: it may have left, or the ring moved; look again soon. */
  ringMayHaveMoved(): void;
}

/** One call's attempts as runAttempts takes them. */
interface Plan<T> {
  readonly candidates: readonly string[];
  readonly kind: 'read' | 'write';
  readonly deadline: number;
  readonly hedge: HedgeDelay | undefined;
  readonly send: (address: string) => Promise<T>;
  readonly timed: boolean;
}

/** Why an attempt is sent. */
type Why = 'first' | 'hedge' | 'move' | 'failover';

/**
 * The attempts of one call (runAttempts) at `candidates`, each sent by `send`; hedged
 * after `hedge`'s delay, if any. `timed` false: the answer's time is not the node's
 * latency (a batch's is many calls'), and does not go into its health figures. An error
 * any node would give ends the call at once; others end it when no attempt is left and
 * no candidate, or the deadline passed.
 */
export function runAttempts<T>(
  ctx: AttemptContext,
  candidates: readonly string[],
  kind: 'read' | 'write',
  deadline: number,
  hedge: HedgeDelay | undefined,
  send: (address: string) => Promise<T>,
  timed = true,
): Promise<T> {
  ctx.stats.calls++;
  ctx.budget.earn();
  return new Promise((resolve, reject) =>
    new CallAttempts(ctx, { candidates, kind, deadline, hedge, send, timed }, resolve, reject).start(),
  );
}

/** One call's attempts in flight: the candidates sent to so far, those still out, and the timer of its hedges and moves. */
class CallAttempts<T> {
  readonly #ctx: AttemptContext;
  readonly #plan: Plan<T>;
  readonly #resolve: (value: T) => void;
  readonly #reject: (e: grpc.ServiceError) => void;
  /** The index of the next candidate. */
  #next = 0;
  #done = false;
  #moved = false;
  #timer: NodeJS.Timeout | undefined;
  #last: grpc.ServiceError | undefined;
  /** The addresses of the attempts out. */
  readonly #out = new Set<string>();
  /** When the last attempt was sent: a hedge waits its delay from there. */
  #lastLaunch = 0;
  /** Whether the budget's refusal of a hedge was counted: once a call. */
  #refusedOnce = false;
  /** When the timer was due: how late it fired is the client's own stall. */
  #expectAt = 0;

  /** The attempts of `plan`, the call ended by `resolve` or `reject`. */
  constructor(ctx: AttemptContext, plan: Plan<T>, resolve: (value: T) => void, reject: (e: grpc.ServiceError) => void) {
    this.#ctx = ctx;
    this.#plan = plan;
    this.#resolve = resolve;
    this.#reject = reject;
  }

  /** The first attempt, and the timer of hedges and moves. */
  start(): void {
    if (!this.#launch('first')) return this.#fail();
    if (this.#plan.hedge !== undefined || this.#ctx.adaptive) this.#arm();
  }

  /** The call ends: with `e`, or with `value`; the first ending counts, the rest are ignored. */
  #finish(e?: grpc.ServiceError, value?: T): void {
    if (this.#done) return;
    this.#done = true;
    clearTimeout(this.#timer);
    if (e !== undefined) this.#reject(e);
    else if (value !== undefined) this.#resolve(value);
  }

  /** The call ends with the last attempt's error, or DEADLINE_EXCEEDED when none was sent. */
  #fail(): void {
    this.#finish(
      this.#last ??
        (Object.assign(new Error(NO_NODE_TRIED), {
          code: grpc.status.DEADLINE_EXCEEDED,
          details: NO_NODE_TRIED,
          metadata: new grpc.Metadata(),
        }) as grpc.ServiceError),
    );
  }

  /** Send an attempt to the next candidate; false when none is left or the deadline passed. */
  #launch(why: Why): boolean {
    const { candidates, deadline, send, timed } = this.#plan;
    const { stats, health } = this.#ctx;
    if (this.#next >= candidates.length || Date.now() >= deadline) return false;
    const address = candidates[this.#next++]!;
    this.#out.add(address);
    stats.attempts++;
    if (why === 'hedge') stats.hedges++;
    else if (why === 'move') stats.moved++;
    else if (why === 'failover') stats.failovers++;
    health.sent(address);
    const sentAt = performance.now();
    this.#lastLaunch = sentAt;
    const ended = (ending: Ending): number => {
      this.#out.delete(address);
      const ms = performance.now() - sentAt;
      health.ended(address, ending, timed ? ms : NaN);
      return ms;
    };
    send(address).then(
      (value) => this.#answered(why, value, ended('answered')),
      (e: grpc.ServiceError) => this.#failed(address, e, ended),
    );
    return true;
  }

  /** An attempt sent for `why` was answered after `ms`: the first answer is the call's. */
  #answered(why: Why, value: T, ms: number): void {
    if (this.#done) return;
    this.#plan.hedge?.add(this.#plan.kind, ms);
    if (why === 'hedge' || why === 'move') this.#ctx.stats.hedgesWon++;
    this.#finish(undefined, value);
  }

  /** The attempt at `address` failed with `e`: the node is left alone if it refused, and the call fails over or ends. */
  #failed(address: string, e: grpc.ServiceError, ended: (ending: Ending) => number): void {
    const pushback = pushbackMs(e);
    const refused = pushback !== undefined || e.code === grpc.status.UNAVAILABLE;
    ended(e.code === grpc.status.DEADLINE_EXCEEDED ? 'timeout' : refused ? 'refused' : 'answered');
    if (refused) {
      this.#ctx.health.avoid(address, pushback ?? AVOID_UNAVAILABLE_MS);
      // A node that cannot take it now may have left, or the ring moved: look again soon.
      if (pushback === undefined) this.#ctx.ringMayHaveMoved();
    }
    if (this.#done) return;
    this.#last = e;
    if (!refused && FINAL.has(e.code)) return this.#finish(e);
    if (this.#out.size > 0) return; // another attempt may still answer
    if (!refused || !this.#launch('failover')) this.#fail();
  }

  /** The timer fired: a move when every attempt out is on a silent node, else a hedge when its delay passed. */
  #watch(): void {
    const { candidates, hedge, kind } = this.#plan;
    const { health, budget, stats } = this.#ctx;
    if (this.#done || this.#next >= candidates.length) return;
    const now = performance.now();
    health.late(now - this.#expectAt);
    if (
      this.#ctx.adaptive &&
      !this.#moved &&
      this.#out.size > 0 &&
      [...this.#out].every((a) => health.unresponsive(a))
    ) {
      this.#moved = true;
      this.#launch('move');
    } else if (hedge !== undefined && now - this.#lastLaunch >= hedge.delay(kind) - 1) {
      if (budget.take()) this.#launch('hedge');
      else if (!this.#refusedOnce) {
        this.#refusedOnce = true;
        stats.hedgesRefused++;
      }
    }
    this.#arm();
  }

  /** Set the timer of the next hedge or move, while no answer came and candidates are left. */
  #arm(): void {
    const { candidates, hedge, kind, deadline } = this.#plan;
    if (this.#done || this.#next >= candidates.length) return;
    // Until the hedge is due; when it is overdue (the budget refused it), one delay more.
    const delay = hedge?.delay(kind) ?? Infinity;
    const due = this.#lastLaunch + delay - performance.now();
    const wait = Math.max(1, Math.min(this.#ctx.stallMs, due > 0 ? due : delay));
    if (deadline - Date.now() <= wait) return;
    this.#expectAt = performance.now() + wait;
    this.#timer = setTimeout(() => this.#watch(), wait);
  }
}

/**
 * A compare-and-set on its candidates (asked for once the call is counted) one at a time:
 * the next only when a node refused it before it ran (casNotApplied, and UNAVAILABLE or
 * RESOURCE_EXHAUSTED: another node may take it); never hedged or moved, since a second
 * round of one write could answer "not applied" after the first applied it.
 */
export async function casAttempts(
  ctx: AttemptContext,
  candidates: () => readonly string[],
  deadline: number,
  req: Extract<Request, { op: 'putIf' | 'deleteIf' }>,
  send: (address: string) => Promise<KvReply>,
): Promise<PutIfResult> {
  const { stats, health } = ctx;
  stats.calls++;
  let last: unknown;
  for (const address of candidates()) {
    if (Date.now() >= deadline) break;
    stats.attempts++;
    if (last !== undefined) stats.failovers++;
    health.sent(address);
    const sentAt = performance.now();
    try {
      const r = answerOf(await send(address), 'putIf');
      health.ended(address, 'answered', performance.now() - sentAt);
      // Applied, the key holds what was written: the value of a putIf, nothing after a deleteIf.
      if (r.applied)
        return {
          applied: true,
          context: r.context,
          found: req.op === 'putIf',
          value: req.op === 'putIf' ? req.value : undefined,
        };
      return { applied: false, context: r.context, found: r.found, value: r.found ? r.value : undefined };
    } catch (e) {
      const err = e as grpc.ServiceError;
      const retry =
        casNotApplied(err) && (err.code === grpc.status.UNAVAILABLE || err.code === grpc.status.RESOURCE_EXHAUSTED);
      health.ended(
        address,
        err.code === grpc.status.DEADLINE_EXCEEDED ? 'timeout' : retry ? 'refused' : 'answered',
        performance.now() - sentAt,
      );
      if (!retry) throw err;
      health.avoid(address, pushbackMs(err) ?? AVOID_UNAVAILABLE_MS);
      last = err;
    }
  }
  if (last !== undefined) throw last;
  const metadata = new grpc.Metadata();
  metadata.set(CAS_OUTCOME, 'not-applied'); // sent nowhere
  throw Object.assign(new Error(NO_NODE_TRIED), {
    code: grpc.status.DEADLINE_EXCEEDED,
    details: NO_NODE_TRIED,
    metadata,
  });
}
