export { Client, pushbackMs } from './kv.js';
export type { ClientOptions, ClientStats, CallOptions, PutOptions, GetOptions, GetResult, HedgeOptions, BudgetOptions } from './kv.js';
export type { ClientSecurity, TlsClientOptions } from '../security/credentials.js';
export { AdminClient } from './admin.js';
export type { MemberStatus, StatusReply, RingReply, Endpoint, EndpointsReply } from './admin.js';
