#!/usr/bin/env node
// The environment variables a test may read, directly or through the processes it starts (the server, the
// scheduler, the admin commands read their settings from the environment they inherit). Nx hashes this script's
// output into every `test` target's cache key (nx.json, a `runtime` input), so a change of any of them runs the
// tests again instead of replaying a result computed under other settings (issue 17, "Honest benchmark method").
// tools/test/nxTestEnvironment.test.ts scans the sources for variable names and fails when one is not covered.
"use strict"

/** Every variable with one of these prefixes: the product's settings, present and future. */
const PREFIXES = ["SVC_", "SCHEDULER_", "SIMULATED_DIALER_", "TWILIO_"]
/** Variables without a product prefix that the product or the tests read. */
const NAMES = [
  "DATABASE_URL",
  "DATABASE_DIRECT_URL",
  "DATABASE_POOL_MODE",
  "REDIS_URL",
  "LOG_LEVEL",
  "PORT",
  "HOST",
  "NO_COLOR",
  "UPDATE_GOLDEN",
  "TEST_SUMMARY",
  // where the resident linter's sockets go (apps/lint/bin/daemon-client.mjs), as os.tmpdir() reads them
  "TMPDIR",
  "TMP",
  "TEMP"
]

/** Whether `name` is part of the test cache key. */
const covered = (name) => NAMES.includes(name) || PREFIXES.some((prefix) => name.startsWith(prefix))

module.exports = { PREFIXES, NAMES, covered }

if (require.main === module) {
  const lines = Object.keys(process.env).filter(covered).sort().map((name) => `${name}=${process.env[name]}`)
  process.stdout.write(`${lines.join("\n")}\n`)
}
