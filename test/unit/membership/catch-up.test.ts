import { describe, expect, it } from 'vitest';
import { catchUp } from '../../../src/membership/catch-up.js';
import { initialState, type EndpointState } from '../../../src/membership/endpoint.js';

function member(id: string, fields: Record<string, string> = {}): EndpointState {
  return initialState(id, 1, { addr: '127.0.0.1:1', status: 'normal', ...fields });
}

const base = { self: 'a', settleMs: 3000, maxWaitMs: 30_000, heardSinceStart: () => true };

describe('catch-up of a restarted node', () => {
  it('waits while a peer it hears names it among those it holds hints for, and is done once none does', () => {
    const up = () => true;
    const owed = [member('a'), member('b', { hinted: 'c,a' }), member('c', { hinted: 'b' })];
    expect(catchUp({ ...base, states: owed, isUp: up, elapsedMs: 5000 })).toEqual({
      done: false,
      waitingFor: ['b'],
      gaveUp: false,
    });
    const delivered = [member('a'), member('b', { hinted: 'c' }), member('c', { hinted: '' })];
    expect(catchUp({ ...base, states: delivered, isUp: up, elapsedMs: 5000 })).toEqual({
      done: true,
      waitingFor: [],
      gaveUp: false,
    });
    // A node id that merely contains ours is someone else.
    expect(
      catchUp({ ...base, states: [member('a'), member('b', { hinted: 'aa,ab' })], isUp: up, elapsedMs: 0 }).done,
    ).toBe(true);
  });

  it('counts a peer not heard from as possibly owing until settleMs, then as down (it cannot deliver)', () => {
    const states = [member('a'), member('b'), member('c')];
    const isUp = (id: string) => id !== 'c';
    expect(catchUp({ ...base, states, isUp, elapsedMs: 1000 })).toEqual({
      done: false,
      waitingFor: ['c'],
      gaveUp: false,
    });
    expect(catchUp({ ...base, states, isUp, elapsedMs: 3000 }).done).toBe(true);
  });

  it('waits for news from an up peer whose state is still what the node remembered at start', () => {
    const states = [member('a'), member('b', { hinted: '' })];
    expect(catchUp({ ...base, states, isUp: () => true, heardSinceStart: () => false, elapsedMs: 10_000 })).toEqual({
      done: false,
      waitingFor: ['b'],
      gaveUp: false,
    });
    expect(catchUp({ ...base, states, isUp: () => true, elapsedMs: 10_000 }).done).toBe(true);
  });

  it('is not done on a table gossip has not filled yet, until settleMs (a cluster of one)', () => {
    expect(catchUp({ ...base, states: [member('a')], isUp: () => true, elapsedMs: 100 }).done).toBe(false);
    expect(catchUp({ ...base, states: [member('a')], isUp: () => true, elapsedMs: 3000 }).done).toBe(true);
  });

  it('ignores members that left or were removed, and gives up after maxWaitMs, saying so', () => {
    const states = [member('a'), member('b', { status: 'left', hinted: 'a' }), member('c', { hinted: 'a' })];
    expect(catchUp({ ...base, states, isUp: () => true, elapsedMs: 29_999 })).toEqual({
      done: false,
      waitingFor: ['c'],
      gaveUp: false,
    });
    expect(catchUp({ ...base, states, isUp: () => true, elapsedMs: 30_000 })).toEqual({
      done: true,
      waitingFor: ['c'],
      gaveUp: true,
    });
  });
});
