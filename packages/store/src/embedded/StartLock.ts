/**
 * The data directory's lock: every decision about the embedded server (start it, join it, restart
 * it, stop it as the last client) is taken while holding it, so two processes never both start a
 * server or one stops it while another registers. A directory created with mkdir is the lock
 * (atomic on every filesystem); it holds the pid and start time of its holder, so a lock left by a
 * process killed with SIGKILL is taken over.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { isSameProcess, sleepSync, startTime } from "./Processes.ts"

const lockDir = (dataDir: string) => path.join(dataDir, "start.lock")

/** One attempt: true when taken. A dead holder's lock is removed and retried at once. */
const tryTake = (dataDir: string): { readonly taken: true } | { readonly taken: false; readonly holder: string } => {
  const lock = lockDir(dataDir)
  for (;;) {
    try {
      fs.mkdirSync(lock)
      fs.writeFileSync(path.join(lock, "pid"), `${process.pid}\n${startTime(process.pid)}\n`)
      return { taken: true }
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error
      let holder: Array<string>
      try {
        holder = fs.readFileSync(path.join(lock, "pid"), "utf8").split("\n")
      } catch {
        // Created but its pid not yet written: a live holder between two syscalls (or one killed
        // there; a lock older than a few seconds without a pid is that).
        const age = (() => {
          try {
            return Date.now() - fs.statSync(lock).mtimeMs
          } catch {
            return 0
          }
        })()
        if (age > 5_000) fs.rmSync(lock, { recursive: true, force: true })
        return { taken: false, holder: "a process starting up" }
      }
      const pid = Number(holder[0])
      if (!Number.isInteger(pid) || !isSameProcess(pid, holder[1] ?? "")) {
        fs.rmSync(lock, { recursive: true, force: true })
        continue
      }
      return { taken: false, holder: `pid ${pid}` }
    }
  }
}

const release = (dataDir: string) => fs.rmSync(lockDir(dataDir), { recursive: true, force: true })

/** Runs `body` holding the lock; waits (without blocking the event loop) up to `timeoutMs` for it. */
export const withLock = async <A>(dataDir: string, body: () => Promise<A> | A, timeoutMs = 120_000): Promise<A> => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const attempt = tryTake(dataDir)
    if (attempt.taken) break
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${lockDir(dataDir)} (held by ${attempt.holder})`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  try {
    return await body()
  } finally {
    release(dataDir)
  }
}

/**
 * Runs `body` holding the lock, blocking the thread while waiting: for exit handlers and the last
 * client's stop, which run where nothing asynchronous may. Undefined when the lock stayed taken.
 */
export const withLockSync = <A>(dataDir: string, body: () => A, timeoutMs = 30_000): A | undefined => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const attempt = tryTake(dataDir)
    if (attempt.taken) break
    if (Date.now() > deadline) return undefined
    sleepSync(20)
  }
  try {
    return body()
  } finally {
    release(dataDir)
  }
}
