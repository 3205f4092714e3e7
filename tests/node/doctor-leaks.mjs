// doctor()'s leak loops, run by tests/node/doctor.test.mjs in a PID namespace of its own:
// the report looks for the time daemon in every process's /proc entry, which costs ~3 ms a
// call among a loaded machine's hundred processes and ~0.2 ms among this one's few. Prints
// the growth of each loop; exits 1 if one leaked.
import { doctor } from 'flakery'

import { assertNoLeak, caught } from './memory.mjs'

try {
  const report = await assertNoLeak({
    // Every kind of value: objects, arrays, strings, null, numbers, bigints past 2^53.
    doctor: () => doctor({ workerId: 1, layout: 'time:10,sequence:53;epoch=2024-01-01T00:00:00Z' }),
    'doctor bad options': () => caught(() => doctor({ wrokerId: 1 })),
  })
  console.log(report)
} catch (error) {
  console.error(error.message)
  process.exit(1)
}
