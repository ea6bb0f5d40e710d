/** Buckets: names, properties (TTLs written as durations too), the stored-key encoding (sub-keys too) and the cluster's bucket table. */
export * from './bucket.js';
export * from './table.js';
export * from './subkeys.js';
export * from './duration.js';
