/**
 * The import rules of src/, in one place (the folder tree is the architecture: README "Layout"),
 * checked by `npm run check:deps` in CI (dependency-cruiser): no import cycle between modules nor
 * between folders, and
 * each folder imports only the folders listed for it below. A new edge between folders is a
 * decision: add it here, with the reason, or move the code.
 */
const MAY_IMPORT = {
  core: [], // clip, trajectory, numerics: the model everything shares
  native: ['core'], // the addon's typed face
  oracle: ['core', 'io'], // io: the npz reader of ground-truth arrays
  grade: ['core', 'oracle'], // oracle/questions: the question set the grader parses against
  io: ['core'],
  pool: ['core'],
  datasets: ['core', 'io', 'native', 'oracle'], // native: video probing; oracle: ground-truth dynamics
  vo: ['core', 'io', 'native', 'oracle'],
  baseline: ['core', 'io', 'oracle'], // io: the prediction record type
  run: ['baseline', 'core', 'datasets', 'io', 'native', 'oracle', 'pool', 'vo'],
  queue: ['core', 'native', 'pool', 'run'], // pool: its error transport (the worker runs run/'s pool worker)
  synth: ['core', 'io', 'native', 'oracle', 'pool'],
  report: ['baseline', 'core', 'datasets', 'grade', 'io', 'oracle', 'run', 'vo'],
  view: ['baseline', 'core', 'datasets', 'io', 'native', 'oracle', 'report', 'run', 'vo'], // baseline: the run's frame selection
  audit: ['baseline', 'core', 'datasets', 'grade', 'io', 'oracle', 'vo'], // oracle: a KITTI sequence's windows labelled from its poses; vo: the protocol's frames and the engine's densifier (the sampling ceiling)
  egogears: ['core', 'datasets', 'grade'],
  prompts: ['core', 'datasets'], // datasets: the clips and their ground-truth arrays
  doctor: ['native'],
  throughput: ['core', 'native', 'oracle', 'report', 'run', 'vo'], // `egogeo bench`: run/'s pool path timed; report/: its SVG plot
  // cli/ and src/index.ts (the library entry) may import anything; nothing imports cli/.
};

module.exports = {
  forbidden: [
    { name: 'no-circular', severity: 'error', comment: 'an import cycle between modules', from: {}, to: { circular: true } },
    // Folders too: a cycle between folders (io -> grade -> oracle -> io) is a cycle of design even
    // when no module cycle closes. dependency-cruiser's folder scope runs the rule on the graph of
    // folders (each folder depends on every folder its modules import from).
    { name: 'no-folder-cycle', scope: 'folder', severity: 'error', comment: 'an import cycle between folders of src/', from: { path: '^src/' }, to: { circular: true } },
    { name: 'nothing-imports-cli', severity: 'error', from: { path: '^src/(?!cli/)' }, to: { path: '^src/cli/' } },
    ...Object.entries(MAY_IMPORT).map(([folder, allowed]) => ({
      name: `${folder}-may-import-${allowed.join('-') || 'nothing'}`,
      severity: 'error',
      comment: `src/${folder}/ may import only ${allowed.length ? allowed.map((a) => `src/${a}/`).join(', ') : 'nothing from src/'}`,
      from: { path: `^src/${folder}/` },
      to: { path: `^src/(?!(${[folder, ...allowed].join('|')})/)` },
    })),
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true, // type-only imports count: a cycle of types is a cycle of design
    moduleSystems: ['es6'],
  },
};
