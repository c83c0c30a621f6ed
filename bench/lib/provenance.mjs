// What a results file was measured with, as `egogeo bench` and bench/stage-profile.mjs record it
// (src/throughput/provenance.ts): the git commit of this checkout (`-dirty` when tracked files
// differ; null outside a checkout) and the engine (egogeo's version, the addon build's hash, the
// device). Every bench script spreads it into the JSON it writes: `{ ...measuredWith(), … }`.
import { provenance } from '../../dist/throughput/provenance.js';

export function measuredWith() {
  const p = provenance();
  return { gitCommit: p.gitCommit, engine: p.engine };
}
