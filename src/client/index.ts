export { Client, MAX_BATCH_KEYS, MAX_BATCH_VALUE_BYTES, pushbackMs } from './kv.js';
export type { ClientOptions, ClientStats, CallOptions, PutOptions, GetOptions, GetResult, HedgeOptions, BudgetOptions, KeyResult, PutItem, PutManyOptions } from './kv.js';
export type { ClientSecurity, TlsClientOptions } from '../security/credentials.js';
export { AdminClient } from './admin.js';
export type { MemberStatus, StatusReply, RingReply, Endpoint, EndpointsReply, BucketInfo, BucketChangeReply } from './admin.js';
export type { BucketProps } from '../buckets/index.js';
