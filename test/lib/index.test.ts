/** The library entry point (package.json `main` → dist/index.js, from src/index.ts): the public API is there and works. */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import * as egogeo from '../../src/index.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

describe('egogeo (library)', () => {
  it('package.json names the compiled entry point and its types', () => {
    const pkg = JSON.parse(readFileSync(`${ROOT}package.json`, 'utf8')) as { main: string; types: string };
    expect(pkg.main).toBe('dist/index.js');
    expect(pkg.types).toBe('dist/index.d.ts');
  });

  it('exports the oracle, grader, clip estimation, dataset reading, runner and doctor', () => {
    for (const name of [
      'runOracle', 'loadQuestions', 'DEFAULT_QUESTIONS_PATH', 'summaryFeatures',
      'parsePredictionsJsonl', 'readPredictions',
      'estimateClip', 'estimateClipAsync', 'processClip', 'processClipAsync', 'probeVideo', 'renderClip',
      'readDataset', 'readKittiSequence', 'kittiClips', 'readTrajectories', 'ClipDataError', 'InputError',
      'runBenchmark', 'mergeShards', 'runChecks',
      'optionTable', 'smoothSpeed', 'engineVersion', 'decideDevice', 'gpuSelfCheck', 'CancelledError', 'InternalError',
    ]) {
      expect(egogeo, name).toHaveProperty(name);
    }
  });

  it('runs the oracle on a trajectory without the native engine', () => {
    const n = 31;
    const t = Float64Array.from({ length: n }, (_, i) => i * 0.1);
    const traj = egogeo.makeTrajectory('straight', { t, x: t.map((s) => 10 * s), y: new Float64Array(n), yaw: new Float64Array(n) });
    const { labels } = egogeo.runOracle(traj, egogeo.loadQuestions(egogeo.DEFAULT_QUESTIONS_PATH));
    expect(Object.keys(labels).length).toBe(14);
  });
});
