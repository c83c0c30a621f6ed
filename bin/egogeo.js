#!/usr/bin/env node
import { guardStdout, main } from '../dist/cli/main.js';

guardStdout();
process.exitCode = await main(process.argv);
