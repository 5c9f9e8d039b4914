/**
 * Worker ids, and telling from one whether the worker's process is gone (decision 0402).
 *
 * A worker that dies leaves its tasks `dialling` under leases that nobody renews; by the leases alone, the tasks are
 * taken up when the lease runs out (`SCHEDULER_LEASE_MS`, 30 s), and until then they hold the org's slots. That
 * wait was 29 of the 40 s a 2,000-task batch took to finish after its only worker was SIGKILLed and started again
 * (tools/bench/crashDrain.bench.ts). Yet a worker on the same machine can know for certain that another is dead:
 * its process is gone. So a default worker id names the process and where its pid means something:
 *
 *   `<host>:<pid>:<random>@<namespace>`
 *
 * where `<namespace>` is a hash of the kernel's boot id and the pid namespace (`/proc/self/ns/pid`). Two workers
 * with the same namespace token see the same processes, so `isGone` may look the pid up: no such process (or a
 * zombie) is a dead worker. Anything else is not known to be dead: another machine, another container (its own
 * pid namespace), a configured `SCHEDULER_WORKER_ID` without the suffix, a pid that exists (even if reused by an
 * unrelated process: then the lease runs out as before). The check errs only towards waiting.
 */
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"

const read = (file: string, link = false): string | undefined => {
  try {
    return link ? fs.readlinkSync(file) : fs.readFileSync(file, "utf8").trim()
  } catch {
    return undefined
  }
}

let token: string | undefined | null = null

/**
 * This process's namespace token (12 hex digits of sha256 over the boot id and the pid namespace); undefined where
 * /proc does not tell them (not Linux), and then workers are never judged by their pid.
 *
 * @category constructors
 */
export const namespaceToken = (): string | undefined => {
  if (token === null) {
    const boot = read("/proc/sys/kernel/random/boot_id")
    const pidNamespace = read("/proc/self/ns/pid", true)
    token = boot === undefined || pidNamespace === undefined
      ? undefined
      : crypto.createHash("sha256").update(`${boot}\n${pidNamespace}`).digest("hex").slice(0, 12)
  }
  return token
}

/**
 * A worker id that no other process shares: host, pid, a random suffix, and the namespace token where there is one.
 *
 * @category constructors
 */
export const newWorkerId = (): string => {
  const id = `${os.hostname()}:${process.pid}:${Math.random().toString(36).slice(2, 8)}`
  const ns = namespaceToken()
  return ns === undefined ? id : `${id}@${ns}`
}

const ID = /^[^@]*:(\d+):[a-z0-9]+@([0-9a-f]{12})$/

/** Running, and not a zombie (a process killed but not yet reaped is dead all the same). */
const isRunning = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
  } catch (error) {
    // EPERM: it exists, under another user
    if ((error as NodeJS.ErrnoException).code !== "EPERM") return false
  }
  const stat = read(`/proc/${pid}/stat`)
  if (stat === undefined) return true
  return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z"
}

/**
 * Whether the worker with this id is certainly dead: its id says it ran in this pid namespace, and no process has
 * its pid (or it is a zombie). False whenever that cannot be known.
 *
 * @category predicates
 */
export const isGone = (workerId: string, self: string): boolean => {
  if (workerId === self) return false
  const match = ID.exec(workerId)
  const ns = namespaceToken()
  if (match === null || ns === undefined || match[2] !== ns) return false
  const pid = Number(match[1])
  // this process's pid under another id: a sibling worker in this process (tests run several), or a dead process
  // whose pid came round again; alive as far as anyone can tell
  if (!Number.isSafeInteger(pid) || pid <= 0 || pid === process.pid) return false
  return !isRunning(pid)
}
