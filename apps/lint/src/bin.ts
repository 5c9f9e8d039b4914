// svc-lint entry (sources and the ESM bundle): loads the program and the Node runtime, runs it.
//
// V8's compile cache is switched on before anything else loads: the effect modules the CLI needs
// compile in ~0.5 s on a cold start and load from the cache in a fraction of that afterwards. The
// modules are then imported dynamically, so the cache applies to them.
import * as Module from "node:module"

Module.enableCompileCache?.()

const [{ runMain }, { layer }, { main }] = await Promise.all([
  // Subpath imports: the package's index also loads the HTTP, socket and worker modules.
  import("@effect/platform-node/NodeRuntime"),
  import("@effect/platform-node/NodeServices"),
  import("./main.ts")
])

// The bin starts the resident linter (Daemon.ts) as `svc-lint --svc-lint-internal-serve SOCKET IDLE_MS`.
if (process.argv[2] === "--svc-lint-internal-serve") {
  const { serve } = await import("./daemon/Daemon.ts")
  serve({ runMain, layer }, { socket: process.argv[3]!, idleMs: Number(process.argv[4]) })
} else main({ runMain, layer })
