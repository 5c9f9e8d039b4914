#!/usr/bin/env node
// npm links this file as the `svc-lint` bin. Three ways to run, fastest first, each only when it
// is current (built after every source file of the linter and of the domain it uses), so a stale
// build never runs old code (docs/decisions/0202):
// 1. the V8 start-up snapshot `dist/svc-lint.blob`, in a child Node, when this Node is the exact
//    version that built it (snapshots are version-bound): the heap of the loaded linter is
//    deserialised instead of evaluated;
// 2. the bundle `dist/svc-lint.mjs` (one file: no module resolution or type stripping);
// 3. the TypeScript sources (Node >= 22.18).
// `npm run build -w @svc/lint` builds 1 and 2.
/* global setInterval, clearInterval */
import * as fs from "node:fs"
import * as path from "node:path"

const here = path.dirname(new URL(import.meta.url).pathname)
const dist = path.join(here, "..", "dist")

const newestSource = (dir) => {
  let newest = 0
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name)
    newest = Math.max(newest, entry.isDirectory() ? newestSource(full) : fs.statSync(full).mtimeMs)
  }
  return newest
}

// Walked once per run, however many builds are checked against it.
let sourcesChanged
const newestOfSources = () =>
  sourcesChanged ??= Math.max(
    newestSource(path.join(here, "..", "src")),
    newestSource(path.join(here, "..", "..", "..", "packages", "domain", "src"))
  )

const isCurrent = (file) => {
  try {
    return fs.statSync(file).mtimeMs >= newestOfSources()
  } catch {
    return false
  }
}

const snapshotFor = () => {
  try {
    const blob = path.join(dist, "svc-lint.blob")
    const info = JSON.parse(fs.readFileSync(path.join(dist, "svc-lint.blob.json"), "utf8"))
    return info.node === process.version && process.env.SVC_LINT_NO_SNAPSHOT === undefined && isCurrent(blob)
      ? blob
      : undefined
  } catch {
    return undefined
  }
}

const bundle = path.join(dist, "svc-lint.mjs")
const blob = snapshotFor()
const bundleCurrent = blob === undefined && isCurrent(bundle)
const sources = path.join(here, "..", "src", "bin.ts")

// --daemon, --daemon-stop, --daemon-status: through this folder's resident linter
// (daemon-client.mjs); it answers undefined when this process must run the linter itself.
const args = process.argv.slice(2)
const client = args.some((a) => a.startsWith("--daemon")) ? await import("./daemon-client.mjs") : undefined
const daemon = client?.daemonMode(args)
if (daemon?.mode !== undefined) {
  const program = blob !== undefined
    ? ["--snapshot-blob", blob, "--"]
    : [bundleCurrent ? bundle : sources]
  const programId = JSON.stringify([
    process.version,
    ...program,
    fs.statSync(blob ?? (bundleCurrent ? bundle : sources)).mtimeMs,
    blob === undefined && !bundleCurrent ? newestOfSources() : 0
  ])
  const code = await client.viaDaemon({ mode: daemon.mode, args: daemon.args, program, programId })
  if (code !== undefined) {
    process.exitCode = code
  } else {
    await runHere(daemon.args)
  }
} else {
  await runHere(args)
}

async function runHere(argv) {
  if (blob !== undefined) {
    // Loaded here, not up front: a run through the resident linter never needs it.
    const { spawn } = await import("node:child_process")
    // As the bootstrap runs `npm start` (docs/decisions/0010, 0015): the child runs in a process group
    // of its own and this process passes SIGINT, SIGTERM and SIGHUP on to it, once (a terminal's Ctrl-C
    // reaches us directly and again through npm). A blocking spawnSync could not: a signal to this
    // process killed it and left the linter running. The child stops by itself if this process dies
    // without passing anything on (SIGKILL): it watches that we stay its parent (src/main.ts).
    // Listening before the child exists: a signal that arrives while it is being started is passed on once it is.
    const signals = ["SIGINT", "SIGTERM", "SIGHUP"]
    let child
    let pending
    let forwarded = false
    const forward = (signal) => {
      if (forwarded) return
      forwarded = true
      if (child === undefined) pending = signal
      else child.kill(signal)
    }
    for (const signal of signals) process.on(signal, forward)
    child = spawn(process.execPath, ["--snapshot-blob", blob, "--", ...argv], {
      stdio: "inherit",
      detached: true,
      env: { ...process.env, SVC_SUPERVISOR_PID: String(process.pid) }
    })
    if (pending !== undefined) child.kill(pending)
    // A parent that dies without passing its signal on (npm killed with SIGKILL, a forking shell
    // between npm and us) leaves us orphaned: our parent changing is that signal.
    const parent = process.ppid
    const orphanWatch = setInterval(() => {
      if (process.ppid !== parent) forward("SIGTERM")
    }, 250)
    orphanWatch.unref()
    const exit = await new Promise((resolve, reject) => {
      child.once("error", reject)
      child.once("exit", (code, signal) => resolve({ code, signal }))
    })
    clearInterval(orphanWatch)
    // We leave as the child did.
    if (exit.signal) {
      for (const signal of signals) process.removeListener(signal, forward)
      process.kill(process.pid, exit.signal)
    }
    process.exit(exit.code ?? 2)
  }
  process.argv.splice(2, process.argv.length - 2, ...argv)
  // Before the bundle loads: V8 then reuses its compiled code from the second run on.
  const Module = await import("node:module")
  Module.enableCompileCache?.()
  return import(bundleCurrent ? bundle : "../src/bin.ts")
}
