export * from './blocks.js';
export * from './pool.js';
export * from './transport.js';
