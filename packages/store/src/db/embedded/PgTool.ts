/**
 * Runs a PostgreSQL tool (initdb, pg_ctl) as the identity that runs PostgreSQL, in the C locale, with
 * its output captured: a failure names the tool, its exit status and the last lines it printed.
 */
import { spawn, spawnSync } from "node:child_process"
import type { RunAs } from "./Binaries.ts"

const ENV = () => ({ ...process.env, LC_ALL: "C", LANG: "C" })

const failure = (what: string, status: number | null, stdout: string, stderr: string) =>
  new Error(`${what} failed (exit ${status}): ${`${stderr}\n${stdout}`.trim().split("\n").slice(-5).join(" | ")}`)

/** Runs a PostgreSQL tool synchronously: for init and for stops (exit handlers cannot wait). */
export const runSync = (what: string, cmd: string, args: ReadonlyArray<string>, as: RunAs, timeoutMs = 120_000) => {
  const result = spawnSync(cmd, args, {
    ...as,
    encoding: "utf8",
    timeout: timeoutMs,
    // pg_ctl must not inherit our stdio: the server it forks would hold the terminal open.
    stdio: ["ignore", "pipe", "pipe"],
    env: ENV()
  })
  if (result.error) throw new Error(`${what}: ${result.error.message}`)
  if (result.status !== 0) throw failure(what, result.status, result.stdout, result.stderr)
  return result.stdout
}

/**
 * Runs a PostgreSQL tool without blocking the event loop: a restart during an outage must not stop
 * the HTTP server from answering 503 meanwhile.
 */
export const runAsync = (what: string, cmd: string, args: ReadonlyArray<string>, as: RunAs, timeoutMs = 120_000) =>
  new Promise<string>((resolve, reject) => {
    const child = spawn(cmd, args, { ...as, stdio: ["ignore", "pipe", "pipe"], env: ENV(), timeout: timeoutMs })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (chunk) => (stdout += chunk))
    child.stderr.on("data", (chunk) => (stderr += chunk))
    child.once("error", (error) => reject(new Error(`${what}: ${error.message}`)))
    child.once("exit", (code) => code === 0 ? resolve(stdout) : reject(failure(what, code, stdout, stderr)))
  })
