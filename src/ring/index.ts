/**
 * ringkv/ring: the placement ring as a library. Pure and synchronous: no I/O, no timers.
 * `Ring` holds tokens and answers placement questions; the claim functions (claim.ts)
 * choose tokens and heirs for a cluster of N replicas.
 */
export { Ring, MAX_RING_TOKENS } from './ring.js';
export { claimRing, claimJoin, joinRing, leaveHeirs, leaveRing } from './claim.js';
export type { RingMember, RingRange, RangeChange, Target } from './ring.js';
export { DEFAULT_TOKENS_PER_NODE } from './ring-options.js';
export type { RingOptions, Allocation } from './ring-options.js';
export type { Member } from './member.js';
export { RingError } from './ring-errors.js';
export type { RingErrorCode } from './ring-errors.js';
export { tokenOf, hashInto } from './hash.js';
export { RING_SIZE, MAX_TOKEN, arcFraction, tokenHex, unitKey } from './tokens.js';
export type { RangeUnit } from './tokens.js';
export { balance, fairShares } from './balance.js';
export type { Balance } from './balance.js';
