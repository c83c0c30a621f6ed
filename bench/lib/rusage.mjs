// Preloaded into a measured process (`node --import ./bench/lib/rusage.mjs bin/egogeo.js …`): at exit
// it writes the process's own resource usage — CPU time of all its threads, peak RSS — as JSON to
// $EGOGEO_RUSAGE_OUT. The command itself runs unchanged (the plain CLI, its worker threads included).
import { writeFileSync } from 'node:fs';

const out = process.env.EGOGEO_RUSAGE_OUT;
if (out) {
  process.on('exit', (code) => {
    const ru = process.resourceUsage();
    writeFileSync(out, JSON.stringify({ code, userSeconds: ru.userCPUTime / 1e6, systemSeconds: ru.systemCPUTime / 1e6, maxRssMB: ru.maxRSS / 1024, voluntarySwitches: ru.voluntaryContextSwitches, involuntarySwitches: ru.involuntaryContextSwitches }));
  });
}
