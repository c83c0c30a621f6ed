#!/usr/bin/env node
/**
 * Grader throughput: `evaluate()` (answer parsing + every metric + consistency) over 1,000,000
 * predictions on one core. Predictions are generated in memory, deterministically (seeded PRNG):
 * 14 questions per clip, answers a mix of exact labels ("Left", "no_peak", "No."), sentences and
 * multi-line reasoning ("The vehicle is turning left.", "...\nno"), and unparsable text. Records
 * are built from JSONL text with JSON.parse, as a predictions file would give them.
 *
 * Usage: npx tsc -p tsconfig.json && node bench/grader.mjs [N] [RUNS]   (or [--n N] [--runs RUNS])
 * Writes bench/results/grader.json; prints predictions/s (median of RUNS, default 5; N default 1,000,000).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

// Strict: an unknown flag or a third positional is an error. N and RUNS as positionals (as before) or flags.
const { values: flags, positionals } = parseArgs({ options: { n: { type: 'string' }, runs: { type: 'string' } }, allowPositionals: true });
if (positionals.length > 2) throw new Error(`bench/grader: at most two arguments, N and RUNS (got ${positionals.join(' ')})`);

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
let lib;
let questionsLib;
let readerLib;
let randomLib;
let provenanceLib;
try {
  lib = await import(join(root, 'dist/grade/index.js'));
  questionsLib = await import(join(root, 'dist/oracle/questions.js'));
  readerLib = await import(join(root, 'dist/io/predictions.js'));
  randomLib = await import(join(root, 'dist/core/random.js'));
  provenanceLib = await import('./lib/provenance.mjs');
} catch (e) {
  console.error(`bench/grader: cannot load dist/ (run "npx tsc -p tsconfig.json" first): ${e.message}`);
  process.exit(1);
}
const { evaluate } = lib;
const questions = questionsLib.loadQuestions();

const N = Number(flags.n ?? positionals[0] ?? 1_000_000);
const RUNS = Number(flags.runs ?? positionals[1] ?? 5);

const rand = randomLib.mulberry32(20260501);
const pick = (xs) => xs[Math.floor(rand() * xs.length)];

const cap = (s) => s[0].toUpperCase() + s.slice(1);
const num = () => (rand() * 60).toFixed(1);
const WORDS = ['road', 'lane', 'frames', 'clip', 'intersection', 'vehicle', 'car ahead', 'traffic light', 'curve', 'camera'];
// Exact answers: the label as models write it when they follow the "answer only" instruction.
const EXACT = [
  (l) => l, (l) => cap(l), (l) => `${l}.`, (l) => l.toUpperCase(), (l) => `**${l}**`, (l) => ` ${l}\n`,
  (l) => l.replace(/_/g, ' '), (l) => `${cap(l.replace(/_/g, ' '))}!`,
];
// Sentences and reasoning: mostly unique strings (numbers and words vary per prediction).
const SENTENCE = [
  (l) => `The answer is ${l.replace(/_/g, ' ')}.`,
  (l) => `Based on frame ${Math.floor(rand() * 30)}, I would say ${l}; the ${pick(WORDS)} moves about ${num()} px.`,
  (l) => `Looking at the ${pick(WORDS)} carefully.\nThe ego vehicle moves at roughly ${num()} m/s.\n${l}`,
  (l) => `${cap(l.replace(/_/g, ' '))}, the ego vehicle shows this over the ${pick(WORDS)} (${num()} s in).`,
  (l) => `Reasoning: the trajectory bends near the ${pick(WORDS)} and the speed changes by ${num()} km/h.\n\nFinal answer: **${l}**`,
  (l) => `It is most likely ${l} (though the ${pick(WORDS)} is only visible for ${num()} seconds).`,
];
const UNPARSABLE = [
  () => 'I cannot determine this from the images.',
  () => '',
  () => `Unclear from the provided frames (${Math.floor(rand() * 10)} usable).`,
  () => `The ${pick(WORDS)} does not show enough detail to decide.`,
  () => '   ',
  () => `Sorry, I am unable to answer that question based on ${Math.floor(rand() * 10) + 2} frames alone.`,
];

const qs = questions.questions.filter((q) => q.choices && q.choices.length);
const lines = [];
let clip = 0;
while (lines.length < N) {
  const clipId = clip % 2 === 0 ? `clip_${String(clip).padStart(6, '0')}` : `carla_${String(clip).padStart(6, '0')}`;
  for (const q of qs) {
    if (lines.length >= N) break;
    const oracle = pick(q.choices);
    const label = rand() < 0.6 ? oracle : pick(q.choices);
    const r = rand();
    const answer = r < 0.5 ? pick(EXACT)(label) : r < 0.85 ? pick(SENTENCE)(label) : pick(UNPARSABLE)();
    lines.push(JSON.stringify({
      qa_id: `qa_${String(lines.length).padStart(8, '0')}`,
      clip_id: clipId,
      question_id: q.id,
      category: q.category,
      oracle_label: oracle,
      model_answer: answer,
    }));
  }
  clip++;
}
const jsonl = lines.join('\n');
const records = lines.map((l) => JSON.parse(l));
lines.length = 0;

// Warm-up (JIT), then timed runs.
evaluate(records.slice(0, 50_000), questions);
const times = [];
let result;
for (let k = 0; k < RUNS; k++) {
  const t0 = process.hrtime.bigint();
  result = evaluate(records, questions);
  const t1 = process.hrtime.bigint();
  times.push(Number(t1 - t0) / 1e6);
}
const sorted = [...times].sort((a, b) => a - b);
const median = sorted[Math.floor(sorted.length / 2)];
const perSec = Math.round(N / (median / 1000));

// Secondary figure: end to end from JSONL text (validating reader + evaluate), median of 3.
const e2e = [];
for (let k = 0; k < 3; k++) {
  const t0 = process.hrtime.bigint();
  evaluate(readerLib.parsePredictionsJsonl(jsonl, 'bench.jsonl').records, questions);
  e2e.push(Number(process.hrtime.bigint() - t0) / 1e6);
}
const e2eMedian = [...e2e].sort((a, b) => a - b)[1];

const out = {
  ...provenanceLib.measuredWith(),
  benchmark: 'grader throughput: evaluate() over in-memory predictions (answer parsing + all metrics + consistency), one core',
  n_predictions: N,
  runs: RUNS,
  run_ms: times.map((t) => Math.round(t * 10) / 10),
  median_ms: Math.round(median * 10) / 10,
  predictions_per_s: perSec,
  end_to_end_from_jsonl: {
    what: 'parsePredictionsJsonl (JSON.parse + validation) + evaluate, median of 3',
    run_ms: e2e.map((t) => Math.round(t * 10) / 10),
    predictions_per_s: Math.round(N / (e2eMedian / 1000)),
  },
  parsed: result.n_parsed,
  parsable_coverage: result.parsable_coverage,
  global_accuracy: result.global.accuracy,
  node: process.version,
  cpu: cpus()[0]?.model ?? 'unknown',
  date: new Date().toISOString(),
};
mkdirSync(join(root, 'bench/results'), { recursive: true });
writeFileSync(join(root, 'bench/results/grader.json'), `${JSON.stringify(out, null, 2)}\n`);
console.log(`grader: ${N.toLocaleString('en-US')} predictions, median of ${RUNS}: ${out.median_ms} ms → ${perSec.toLocaleString('en-US')} predictions/s (parsed ${result.n_parsed}, coverage ${result.parsable_coverage})`);
console.log(`        end to end from JSONL text (reader + evaluate): ${out.end_to_end_from_jsonl.predictions_per_s.toLocaleString('en-US')} predictions/s`);
