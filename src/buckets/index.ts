/** Buckets: names, properties, the stored-key encoding and the cluster's bucket table. */
export * from './bucket.js';
export * from './table.js';
