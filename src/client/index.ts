export { Client, pushbackMs } from './kv.js';
export type { ClientOptions, ClientStats, CallOptions, PutOptions, GetOptions, GetResult, HedgeOptions, BudgetOptions } from './kv.js';
export type { ClientSecurity, TlsClientOptions } from '../security/credentials.js';
export { AdminClient } from './admin.js';
export type { MemberStatus, StatusReply, RingReply, Endpoint, EndpointsReply, BucketInfo, BucketChangeReply } from './admin.js';
export type { BucketProps } from '../buckets/index.js';
