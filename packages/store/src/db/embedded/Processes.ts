/**
 * What the embedded server's bookkeeping needs to know about other processes: whether one is alive,
 * and whether a pid still names the process that wrote it (pids are reused; the kernel's start time
 * in `/proc/<pid>/stat` tells two holders of one pid apart).
 */
import * as fs from "node:fs"

const stat = (pid: number): Array<string> | undefined => {
  try {
    const text = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
    // Field 2 is the command in parentheses and may itself contain spaces and parentheses.
    return text.slice(text.lastIndexOf(")") + 2).split(" ")
  } catch {
    return undefined
  }
}

/** Running, and not a zombie: a container's init may be slow to reap an exited postmaster. */
export const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EPERM") return false
  }
  const fields = stat(pid)
  // fields[0] is the state (field 3 of the file).
  return fields === undefined || fields[0] !== "Z"
}

/**
 * The process's start time in clock ticks since boot (field 22 of `/proc/<pid>/stat`), or "" where
 * /proc is not readable: then liveness alone decides.
 */
export const startTime = (pid: number): string => stat(pid)?.[19] ?? ""

/** Alive, and the same process that recorded `recordedStart` (not a later one given its pid). */
export const isSameProcess = (pid: number, recordedStart: string): boolean =>
  isAlive(pid) && (recordedStart === "" || startTime(pid) === "" || startTime(pid) === recordedStart)

/** Blocks the thread: for the few synchronous paths (exit handlers, the last client's stop). */
export const sleepSync = (ms: number): void => {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms)
}

/**
 * This process's pid namespace (`pid:[4026531836]`), or undefined where /proc does not say. Pids of two
 * namespaces cannot be compared: a container sharing the data dir sees none of the host's processes, or other
 * processes under the same numbers (decision 0016).
 */
export const pidNamespace = (): string | undefined => {
  try {
    return fs.readlinkSync("/proc/self/ns/pid")
  } catch {
    return undefined
  }
}
