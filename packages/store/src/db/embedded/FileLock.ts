/**
 * A lock on a file, held by this process until it releases it or ends (however it ends: the kernel drops a
 * dead process's locks, SIGKILL included). Whether another process holds it is asked of the kernel, not
 * inferred from a pid, so it holds across pid namespaces (a container sharing the data dir, where a pid means
 * nothing or names another process) and needs no start-time bookkeeping (decision 0016).
 *
 * Node has no `flock`/`fcntl` without a native addon; `node:sqlite` (built in) takes POSIX record locks on its
 * database file (SQLite's unix VFS, https://www.sqlite.org/lockingv3.html): `BEGIN EXCLUSIVE` holds an EXCLUSIVE
 * lock until the transaction ends or the connection closes, and another process's `BEGIN EXCLUSIVE` on the same
 * file fails at once with SQLITE_BUSY (busy timeout 0). Nothing is ever written: the file stays empty, and with
 * the journal kept in memory no `-journal` file appears beside it.
 *
 * POSIX record locks belong to the process and are all dropped when any descriptor of the file is closed, so a
 * lock file must never be opened other than through this module (SQLite keeps its own descriptors open while
 * another connection of the process holds a lock). Two connections of one process exclude each other too
 * (SQLite tracks its locks per file inside the process).
 */
import * as fs from "node:fs"
import { DatabaseSync } from "node:sqlite"

/** A held lock. */
export interface Held {
  readonly file: string
  /** Drops the lock (idempotent). */
  readonly release: () => void
}

/** SQLITE_BUSY: the lock is held by another connection (another process, or another holder in this one). */
const isBusy = (error: unknown) =>
  typeof error === "object" && error !== null && (error as { errcode?: number }).errcode === 5

/** Takes the lock on `file` (created empty when missing) if nobody holds it; `undefined` when somebody does. */
export const tryHold = (file: string): Held | undefined => {
  const db = new DatabaseSync(file, { timeout: 0 })
  try {
    // The journal in memory: a write transaction would otherwise create `<file>-journal` beside the lock.
    db.exec("PRAGMA journal_mode = MEMORY")
    db.exec("BEGIN EXCLUSIVE")
  } catch (error) {
    db.close()
    if (isBusy(error)) return undefined
    throw error
  }
  let held = true
  return {
    file,
    release: () => {
      if (!held) return
      held = false
      db.close()
    }
  }
}

/**
 * Whether a process (this one included) holds the lock on `file`. Asked with a read-only connection, which
 * needs a SHARED lock to read the schema and is refused one while the holder has EXCLUSIVE: a record made by
 * another user (root and a user sharing a data dir) can be asked about with read permission alone. A file that
 * is gone is not held; one this process may not read is counted as held (its holder cannot be told dead).
 */
export const isHeld = (file: string): boolean => {
  let db: DatabaseSync
  try {
    db = new DatabaseSync(file, { readOnly: true, timeout: 0 })
  } catch {
    return fs.existsSync(file)
  }
  try {
    db.prepare("SELECT count(*) AS n FROM sqlite_schema").get()
    return false
  } catch (error) {
    // Anything but SQLITE_BUSY (a file that is not an empty database) is not a lock anybody holds.
    return isBusy(error)
  } finally {
    db.close()
  }
}
