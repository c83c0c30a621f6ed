#!/usr/bin/env node
// `npm run build`, after tsc: config/questions.yaml parsed once, written beside the compiled loader
// (dist/oracle/questions.parsed.json), which takes it for that text only (src/oracle/questions.ts
// `prebuilt`), so runs of the shipped questions load no YAML parser.
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { DEFAULT_QUESTIONS_PATH, PARSED_QUESTIONS_URL, parsedQuestions } from '../dist/oracle/questions.js';

const out = fileURLToPath(PARSED_QUESTIONS_URL);
const parsed = parsedQuestions(readFileSync(DEFAULT_QUESTIONS_PATH, 'utf8'), DEFAULT_QUESTIONS_PATH);
if (!parsed) {
  console.error(`scripts/parse-questions.mjs: ${DEFAULT_QUESTIONS_PATH} parses to values JSON cannot hold; runs will parse the YAML`);
} else {
  writeFileSync(`${out}.tmp`, `${JSON.stringify(parsed)}\n`);
  renameSync(`${out}.tmp`, out);
}
