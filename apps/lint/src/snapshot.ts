// svc-lint entry of the V8 start-up snapshot (`dist/svc-lint.blob`, built by scripts/build.mjs).
//
// Building the snapshot runs this file: the linter, its rules and effect are loaded and
// initialised once, at build time, and a run deserialises that heap instead of loading ~1.4 MB of
// JavaScript (docs/decisions/0202). What cannot live in a snapshot is loaded when the process
// runs: the Node runtime modules (they hold child-process and readline handles).
import * as v8 from "node:v8"
import { serve, SERVE_ARGUMENT } from "./daemon/Daemon.ts"
import { main } from "./main.ts"

v8.startupSnapshot.setDeserializeMainFunction(() => {
  // `node --snapshot-blob blob a b` starts with argv [node, a, b]: there is no script path, so put
  // the program's name where it would be, for the CLI to read its arguments from argv[2] on.
  process.argv.splice(1, 0, "svc-lint")
  void Promise.all([
    import("@effect/platform-node/NodeRuntime"),
    import("@effect/platform-node/NodeServices")
  ]).then(([{ runMain }, { layer }]) =>
    // The bin starts the resident linter as `svc-lint --svc-lint-internal-serve SOCKET IDLE_MS`.
    process.argv[2] === SERVE_ARGUMENT
      ? serve({ runMain, layer }, { socket: process.argv[3]!, idleMs: Number(process.argv[4]) })
      : main({ runMain, layer })
  )
})
