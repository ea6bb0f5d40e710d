/**
 * ringkv/ring: the placement ring as a library. Pure and synchronous: no I/O, no timers.
 */
export { Ring, DEFAULT_TOKENS_PER_NODE, MAX_RING_TOKENS } from './ring.js';
export { leaveHeirs } from './leave-heirs.js';
export type { RingMember, RingOptions, RingRange, RangeChange, Allocation, Target } from './ring.js';
export type { Member } from './member.js';
export { RingError } from './errors.js';
export type { RingErrorCode } from './errors.js';
export { tokenOf, hashInto } from './hash.js';
export { RING_SIZE, MAX_TOKEN, arcFraction, tokenHex } from './tokens.js';
export { balance, fairShares } from './balance.js';
export type { Balance } from './balance.js';
