/**
 * The processes using an embedded server, as files under `<dataDir>/clients/`: one per process, each a lock
 * file its process holds for as long as it is a client (FileLock.ts). The server runs while any of them is
 * held; the last client to leave stops it. A client killed with SIGKILL cannot remove its file, but the kernel
 * drops its lock: a file nobody holds does not count and is removed by the next reader. All reads and writes
 * happen under the data dir's lock (StartLock.ts).
 *
 * Decision 0008: an admin command that started the server must not stop it under a running `npm start`.
 * Liveness was once a pid and its start time; a client in another pid namespace (a container sharing the
 * data dir) found the server's pid dead, deleted its record, and every later admin command stopped PostgreSQL
 * under the running server. A lock held by the process is the same fact in every namespace (decision 0016).
 */
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import * as FileLock from "./FileLock.ts"
import { isSameProcess } from "./Processes.ts"

const dirOf = (dataDir: string) => path.join(dataDir, "clients")

/** A record's name: the pid of its process, then 12 random hex digits. */
const RECORD = /^\d+-[0-9a-f]{12}$/

/** This process's record per data dir: the lock must stay referenced (a collected connection drops it). */
const records = new Map<string, FileLock.Held>()

/** Records this process as a client: `clients/<pid>-<random>`, locked (the pid is for people reading the folder). */
export const register = (dataDir: string): void => {
  if (records.has(dataDir)) return
  fs.mkdirSync(dirOf(dataDir), { recursive: true })
  const file = path.join(dirOf(dataDir), `${process.pid}-${crypto.randomBytes(6).toString("hex")}`)
  const held = FileLock.tryHold(file)
  // A fresh random name nobody else can hold.
  if (held === undefined) throw new Error(`cannot lock the new client record ${file}`)
  records.set(dataDir, held)
}

/** Removes this process's record. */
export const unregister = (dataDir: string): void => {
  const held = records.get(dataDir)
  if (held === undefined) return
  records.delete(dataDir)
  fs.rmSync(held.file, { force: true })
  held.release()
}

/**
 * A record written by versions before decision 0016: a file named by a pid, holding its start time. Nothing
 * holds a lock on it; it counts while that pid names the same process (in this pid namespace, as before).
 */
const legacyLive = (file: string, pid: number): boolean => {
  try {
    return isSameProcess(pid, fs.readFileSync(file, "utf8").trim())
  } catch {
    return false
  }
}

/** How many live clients other than this process there are; records nobody holds are removed. */
export const others = (dataDir: string): number => {
  let names: Array<string>
  try {
    names = fs.readdirSync(dirOf(dataDir))
  } catch {
    return 0
  }
  const own = records.get(dataDir)?.file
  let live = 0
  for (const name of names) {
    const file = path.join(dirOf(dataDir), name)
    if (file === own) continue
    const pid = Number(name)
    const legacy = Number.isInteger(pid) && pid > 0
    // Anything else in the folder is nobody's record.
    if (!legacy && !RECORD.test(name)) continue
    const counts = legacy ? legacyLive(file, pid) : FileLock.isHeld(file)
    if (counts) live++
    else fs.rmSync(file, { force: true })
  }
  return live
}
