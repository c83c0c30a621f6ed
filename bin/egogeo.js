#!/usr/bin/env node
// The CLI from dist/bundle/ (scripts/bundle.mjs: fewer, larger modules, a shorter start) when it
// is at least as new as tsc's dist/cli/main.js, else from dist/cli/ itself (a build that ran tsc
// alone, or EGOGEO_NO_BUNDLE=1 for readable stack traces).
import { statSync } from 'node:fs';

const mtime = (rel) => {
  try {
    return statSync(new URL(rel, import.meta.url)).mtimeMs;
  } catch {
    return -1;
  }
};
const bundled = !process.env.EGOGEO_NO_BUNDLE && mtime('../dist/bundle/main.js') >= mtime('../dist/cli/main.js');
const { guardStdout, main } = await import(bundled ? '../dist/bundle/main.js' : '../dist/cli/main.js');

guardStdout();
process.exitCode = await main(process.argv);
