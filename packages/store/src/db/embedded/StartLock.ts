/**
 * The data directory's lock: every decision about the embedded server (start it, join it, restart it, stop it
 * as the last client) is taken while holding it, so two processes never both start a server or one stops it
 * while another registers. The lock is a lock on `<dataDir>/cluster.lock` held by the process (FileLock.ts): the
 * kernel drops it when its holder ends, SIGKILL included, so there is no holder to judge dead by its pid. (It was
 * a directory made with mkdir holding the holder's pid, taken over when that pid looked dead: from another pid
 * namespace every holder looks dead, and two processes took it at once. Decision 0016.) The file is
 * never removed: a process locking a new file of the same name while another holds the old one would hold it too.
 */
import * as path from "node:path"
import * as FileLock from "./FileLock.ts"
import { sleepSync } from "./Processes.ts"

const lockFile = (dataDir: string) => path.join(dataDir, "cluster.lock")

/** Runs `body` holding the lock; waits (without blocking the event loop) up to `timeoutMs` for it. */
export const withLock = async <A>(dataDir: string, body: () => Promise<A> | A, timeoutMs = 120_000): Promise<A> => {
  const deadline = Date.now() + timeoutMs
  let held: FileLock.Held | undefined
  while ((held = FileLock.tryHold(lockFile(dataDir))) === undefined) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${lockFile(dataDir)} (held by another process)`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  try {
    return await body()
  } finally {
    held.release()
  }
}

/**
 * Runs `body` holding the lock, blocking the thread while waiting: for exit handlers and the last client's stop,
 * which run where nothing asynchronous may. Undefined when the lock stayed taken.
 */
export const withLockSync = <A>(dataDir: string, body: () => A, timeoutMs = 30_000): A | undefined => {
  const deadline = Date.now() + timeoutMs
  let held: FileLock.Held | undefined
  while ((held = FileLock.tryHold(lockFile(dataDir))) === undefined) {
    if (Date.now() > deadline) return undefined
    sleepSync(20)
  }
  try {
    return body()
  } finally {
    held.release()
  }
}
