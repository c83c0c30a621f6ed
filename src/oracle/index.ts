/**
 * oracle/ — the benchmark's deterministic physics oracle: trajectory → uniform dynamics arrays →
 * 12 summary features → 14 labels from the YAML question file. Pure math, no I/O but the config
 * loader. May import: core/.
 */
export * from './dynamics.js';
export * from './features.js';
export * from './questions.js';
export * from './rules.js';
export * from './oracle.js';
export * from './evidence.js';
export * from './calibrate.js';
export * from './sensitivity.js';
