export * from './pool.js';
export * from './transport.js';
