/**
 * A linearizability checker for a compare-and-set register (issue 31), in the manner of
 * Knossos and Porcupine: a search of the history for an order of its operations that
 * (1) puts each operation at one instant between its invocation and its completion and
 * (2) is a legal run of the register from its initial state. Such an order exists exactly
 * when the history is linearizable; the search (Wing and Gong's, with Lowe's memo of
 * visited (linearized set, state) pairs, as Porcupine does it) tries every candidate and
 * backtracks, so a history that is not linearizable is proved so, not guessed.
 *
 * Operations whose outcome is unknown (a timeout: the write may or may not have taken
 * effect, at any time after its invocation) complete at +∞, and need not be linearized at
 * all: the search succeeds once every operation that completed is placed. A read of
 * unknown outcome says nothing and is left out.
 *
 * Keys are independent registers: each key's history is checked on its own (the
 * P-compositionality of linearizability), which keeps the search small.
 */

/** What a register holds: a value, or nothing (absent, or deleted). */
export type RegisterValue = string | null;

/**
 * One operation on one key:
 * - `read`, which returned `value` (null: absent);
 * - `write` of `value` (null: a delete), unconditional;
 * - `cas`, which writes `value` if the register holds `expect` (null: only if absent):
 *   `applied` true, or false with the value the register held then (`current`, when the
 *   reply said; undefined when it did not).
 * `outcome` unknown: it timed out or failed in a way that may have applied it.
 */
export type CasOp =
  | { readonly kind: 'read'; readonly value: RegisterValue }
  | { readonly kind: 'write'; readonly value: RegisterValue }
  | {
      readonly kind: 'cas';
      readonly expect: RegisterValue;
      readonly value: RegisterValue;
      readonly applied?: boolean;
      readonly current?: RegisterValue;
    };

export interface HistoryOp {
  readonly key: string;
  /** When it was invoked and when it completed, in one clock (ms); `endMs` is ignored when the outcome is unknown. */
  readonly startMs: number;
  readonly endMs: number;
  readonly outcome: 'ok' | 'unknown';
  readonly op: CasOp;
  /** A label for reports (a client and a sequence number, say). */
  readonly id?: string;
}

/** The register's next state after `op`, or undefined when `op` could not have happened in `state` (with the outcome it had). */
export function step(state: RegisterValue, op: CasOp, outcome: 'ok' | 'unknown'): RegisterValue | undefined {
  switch (op.kind) {
    case 'read':
      return state === op.value ? state : undefined;
    case 'write':
      return op.value;
    case 'cas':
      if (outcome === 'unknown') return state === op.expect ? op.value : undefined; // not applied is the same as never linearized
      if (op.applied === true) return state === op.expect ? op.value : undefined;
      return state !== op.expect && (op.current === undefined || op.current === state) ? state : undefined;
  }
}

export interface KeyVerdict {
  readonly key: string;
  readonly ops: number;
  /** true: an order was found; false: none exists; undefined: the search passed its budget. */
  readonly linearizable: boolean | undefined;
  /** When not linearizable: the operation no order could place before its completion, from the deepest partial order tried. */
  readonly stuckAt?: HistoryOp;
  /** How many completed operations that deepest order placed. */
  readonly deepest?: number;
  readonly steps: number;
}

export interface Verdict {
  /** false when some key's history is not linearizable; undefined when none is proved wrong but some search passed its budget. */
  readonly linearizable: boolean | undefined;
  readonly keys: KeyVerdict[];
}

interface Entry {
  readonly call: boolean;
  readonly id: number;
  readonly time: number;
  /** A call's return entry (undefined for an unknown outcome's call: it never returns). */
  match: Entry | undefined;
  prev: Entry | undefined;
  next: Entry | undefined;
}

/**
 * Check one key's history: the WGL search over its call and return entries in time order
 * (a call before a return at the same instant: operations that touch overlap).
 */
export function checkKey(
  key: string,
  history: readonly HistoryOp[],
  init: RegisterValue = null,
  budget = 2_000_000,
): KeyVerdict {
  const ops = history.filter((h) => !(h.outcome === 'unknown' && h.op.kind === 'read'));
  const entries: Entry[] = [];
  ops.forEach((h, id) => {
    const call: Entry = { call: true, id, time: h.startMs, match: undefined, prev: undefined, next: undefined };
    entries.push(call);
    if (h.outcome === 'ok') {
      const ret: Entry = { call: false, id, time: h.endMs, match: undefined, prev: undefined, next: undefined };
      call.match = ret;
      entries.push(ret);
    }
  });
  entries.sort((a, b) => a.time - b.time || (a.call === b.call ? 0 : a.call ? -1 : 1));
  const head: Entry = { call: false, id: -1, time: -Infinity, match: undefined, prev: undefined, next: undefined };
  let last = head;
  for (const e of entries) {
    e.prev = last;
    last.next = e;
    last = e;
  }
  const lift = (e: Entry): void => {
    e.prev!.next = e.next;
    if (e.next) e.next.prev = e.prev;
    const m = e.match;
    if (m) {
      m.prev!.next = m.next;
      if (m.next) m.next.prev = m.prev;
    }
  };
  const unlift = (e: Entry): void => {
    const m = e.match;
    if (m) {
      m.prev!.next = m;
      if (m.next) m.next.prev = m;
    }
    e.prev!.next = e;
    if (e.next) e.next.prev = e;
  };
  const completed = ops.filter((h) => h.outcome === 'ok').length;
  const linearized = new Uint8Array(ops.length);
  const seen = new Set<string>();
  const stack: { entry: Entry; state: RegisterValue }[] = [];
  let state = init,
    placed = 0,
    steps = 0,
    deepest = 0;
  let stuckAt: HistoryOp | undefined;
  let entry = head.next;
  while (placed < completed) {
    if (++steps > budget) return { key, ops: ops.length, linearizable: undefined, steps };
    if (entry === undefined) break; // no completion left unplaced past here (one would have sent the search back): cannot happen
    if (entry.call) {
      const h = ops[entry.id]!;
      const next = step(state, h.op, h.outcome);
      if (next !== undefined) {
        linearized[entry.id] = 1;
        const memo = `${Buffer.from(linearized).toString('base64')}|${next === null ? '\u0000' : `=${next}`}`;
        if (!seen.has(memo)) {
          seen.add(memo);
          stack.push({ entry, state });
          state = next;
          if (h.outcome === 'ok') placed++;
          lift(entry);
          entry = head.next;
          continue;
        }
        linearized[entry.id] = 0;
      }
      entry = entry.next;
    } else {
      // A completion reached with its operation unplaced: no order from here places it in time. Back up.
      if (placed >= deepest) {
        deepest = placed;
        stuckAt = ops[entry.id];
      }
      const top = stack.pop();
      if (top === undefined)
        return { key, ops: ops.length, linearizable: false, ...(stuckAt ? { stuckAt } : {}), deepest, steps };
      state = top.state;
      linearized[top.entry.id] = 0;
      if (ops[top.entry.id]!.outcome === 'ok') placed--;
      unlift(top.entry);
      entry = top.entry.next;
    }
  }
  return { key, ops: ops.length, linearizable: placed === completed, steps };
}

/** Check every key's history on its own; the whole is linearizable when each key's is. */
export function checkLinearizable(history: readonly HistoryOp[], init: RegisterValue = null, budget?: number): Verdict {
  const byKey = new Map<string, HistoryOp[]>();
  for (const h of history) (byKey.get(h.key) ?? byKey.set(h.key, []).get(h.key)!).push(h);
  const keys = [...byKey].map(([key, ops]) => checkKey(key, ops, init, budget));
  const linearizable = keys.some((k) => k.linearizable === false)
    ? false
    : keys.every((k) => k.linearizable === true)
      ? true
      : undefined;
  return { linearizable, keys };
}
