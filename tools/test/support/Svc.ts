/**
 * Runs svc the way its users do, for the process-level fault tests: `npm start` and
 * `npm run admin -- …` through npm and the bootstrap, with helpers to find the process tree, wait
 * for an answer, and check that nothing is left running.
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"

export const root = path.resolve(import.meta.dirname, "..", "..", "..")

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

export const freePort = () =>
  new Promise<number>((resolve) => {
    const server = net.createServer().listen(0, "127.0.0.1", () => {
      const port = (server.address() as net.AddressInfo).port
      server.close(() => resolve(port))
    })
  })

/** A data dir that `svc-postgres` may enter (the common case); see the private-checkout test for 0700. */
export const tempDataDir = (prefix = "svc-fault-") => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix))
  fs.chmodSync(dir, 0o755)
  return dir
}

export interface Running {
  readonly child: ChildProcess
  /** stdout and stderr, interleaved. */
  readonly output: () => string
  readonly stdout: () => string
  readonly exited: Promise<number | null>
}

/** `npm <args>` in `cwd` (default: this checkout), output collected. */
export const npm = (args: ReadonlyArray<string>, env: Record<string, string>, cwd = root): Running => {
  let output = ""
  let stdout = ""
  const child = spawn("npm", [...args], {
    cwd,
    env: { ...process.env, LOG_LEVEL: "Info", ...env },
    stdio: ["ignore", "pipe", "pipe"]
  })
  child.stdout?.on("data", (chunk) => {
    output += chunk
    stdout += chunk
  })
  child.stderr?.on("data", (chunk) => (output += chunk))
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)))
  return { child, output: () => output, stdout: () => stdout, exited }
}

/** GET `url` until it answers (any status), or fail after `deadlineMs`. */
export const waitFor = async (url: string, deadlineMs = 90_000, until: (status: number) => boolean = () => true) => {
  const stop = Date.now() + deadlineMs
  let last = "no answer"
  while (Date.now() < stop) {
    try {
      const response = await fetch(url)
      const body = await response.text()
      if (until(response.status)) return { status: response.status, body }
      last = `${response.status} ${body}`
    } catch (error) {
      last = String(error)
    }
    await sleep(100)
  }
  throw new Error(`${url} did not answer as expected within ${deadlineMs} ms (last: ${last})`)
}

/** Pid and parent of every process, from /proc. */
const processes = () => {
  const table: Array<{ pid: number; ppid: number; cmdline: string }> = []
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, "utf8")
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
      if (fields[0] === "Z") continue
      const cmdline = fs.readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0").join(" ").trim()
      table.push({ pid: Number(entry), ppid: Number(fields[1]), cmdline })
    } catch {
      // exited meanwhile
    }
  }
  return table
}

/** `pid` and its live descendants, with their command lines. */
export const tree = (pid: number) => {
  const all = processes()
  const found = all.filter((p) => p.pid === pid)
  for (let i = 0; i < found.length; i++) {
    for (const p of all) if (p.ppid === found[i]!.pid) found.push(p)
  }
  return found
}

/** SIGKILL to `pid` and its descendants: a test's last resort, so a failed assertion leaves nothing running. */
export const killTree = (pid: number | undefined) => {
  if (pid === undefined) return
  for (const p of tree(pid)) {
    try {
      process.kill(p.pid, "SIGKILL")
    } catch {
      // gone meanwhile
    }
  }
}

/** Running, and not a zombie. */
export const alive = (pid: number | undefined) => {
  if (pid === undefined) return false
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z"
  } catch {
    return false
  }
}

/** The embedded server's postmaster for a data dir, if running (wherever its cluster lives). */
export const postmasterOf = (pgdata: string) => {
  try {
    const pid = Number(fs.readFileSync(path.join(pgdata, "postmaster.pid"), "utf8").split("\n")[0])
    return alive(pid) ? pid : undefined
  } catch {
    return undefined
  }
}

/** Whether something listens on `port`. */
export const listening = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = net.connect({ host: "127.0.0.1", port })
    socket.once("connect", () => {
      socket.destroy()
      resolve(true)
    })
    socket.once("error", () => resolve(false))
  })

/** Waits until `check` holds, polling; false after `deadlineMs`. */
export const eventually = async (check: () => boolean | Promise<boolean>, deadlineMs = 30_000) => {
  const stop = Date.now() + deadlineMs
  while (Date.now() < stop) {
    if (await check()) return true
    await sleep(50)
  }
  return check()
}

/** Runs `npm run admin -- args` to completion: exit code, the JSON it printed on stdout, and all output. */
export const admin = async (args: ReadonlyArray<string>, env: Record<string, string>, cwd = root) => {
  const run = npm(["run", "--silent", "admin", "--", ...args], env, cwd)
  const code = await run.exited
  let json: Record<string, unknown> = {}
  try {
    json = JSON.parse(run.stdout().trim().split("\n").at(-1) ?? "")
  } catch {
    // not JSON: the test shows `output`
  }
  return { code, json, output: run.output() }
}
