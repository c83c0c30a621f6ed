/**
 * synth/ — the project's own simulation domain: synthetic driving clips with exact ground truth.
 *
 *   profiles.ts   behaviour profiles (balanced, comfort, default, sporty, safety): accel, braking,
 *                 jerk, lateral and steering limits
 *   bicycle.ts    kinematic bicycle model driven by phase plans (acceleration + curvature commands)
 *   scenarios.ts  manoeuvre generators (emergency braking, stop-and-go, brake-then-turn, turns,
 *                 curves, lane changes, highway, standing still, cruising…)
 *   presets.ts    camera and timing after the benchmark's sources (carla: 1280×720, 10 Hz, 31
 *                 frames; nuscenes: 1600×900, ~12 Hz jittered)
 *   plan.ts       the balanced mix: candidates simulated and labelled by the oracle, rarest answers win
 *   qa.ts         QA records and the reference rules' evidence
 *   dataset.ts    the benchmark layout on disk (clips_index.jsonl, arrays/*.npz, qa.jsonl, frames or
 *                 mp4), rendered on the worker pool (worker.ts, native renderClip), written atomically
 *
 * May import: core/, oracle/, io/, native/, pool/.
 */
export * from './profiles.js';
export * from './bicycle.js';
export * from './scenarios.js';
export * from './presets.js';
export * from './plan.js';
export * from './qa.js';
export * from './dataset.js';
export * from '../core/random.js';
