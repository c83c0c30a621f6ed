/** Text the commands print that more than one of them shows. */
import { labelDistribution, type SynthSummary } from '../synth/index.js';

/** One line per question: the answer counts of the mix. */
export function formatDistribution(s: Pick<SynthSummary, 'clips' | 'questions'>): string {
  const d = labelDistribution(s.clips, s.questions);
  return Object.entries(d)
    .map(([q, m]) => `  ${q.padEnd(28)} ${Object.entries(m).map(([l, n]) => `${l} ${n}`).join(', ')}`)
    .join('\n');
}
