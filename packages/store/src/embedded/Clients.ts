/**
 * The processes using an embedded server, as files under `<dataDir>/clients/`: one per process,
 * named by its pid and holding its start time. The server runs while any of them is alive; the
 * last one to leave stops it. A client killed with SIGKILL cannot remove its file, so a file whose
 * process is gone (or whose pid now names another process) does not count and is removed by the
 * next reader. All reads and writes happen under the start lock (StartLock.ts).
 *
 * Issue 16: an admin command that started the server must not stop it under a running `npm start`.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { isSameProcess, startTime } from "./Processes.ts"

const dirOf = (dataDir: string) => path.join(dataDir, "clients")

/** Records this process as a client. */
export const register = (dataDir: string): void => {
  fs.mkdirSync(dirOf(dataDir), { recursive: true })
  fs.writeFileSync(path.join(dirOf(dataDir), String(process.pid)), `${startTime(process.pid)}\n`)
}

/** Removes this process's record. */
export const unregister = (dataDir: string): void => {
  fs.rmSync(path.join(dirOf(dataDir), String(process.pid)), { force: true })
}

/** Pids of live clients other than this process; records of dead ones are removed. */
export const others = (dataDir: string): Array<number> => {
  let names: Array<string>
  try {
    names = fs.readdirSync(dirOf(dataDir))
  } catch {
    return []
  }
  const live: Array<number> = []
  for (const name of names) {
    const pid = Number(name)
    if (!Number.isInteger(pid) || pid <= 0) continue
    if (pid === process.pid) continue
    let recorded: string
    try {
      recorded = fs.readFileSync(path.join(dirOf(dataDir), name), "utf8").trim()
    } catch {
      continue
    }
    if (isSameProcess(pid, recorded)) live.push(pid)
    else fs.rmSync(path.join(dirOf(dataDir), name), { force: true })
  }
  return live
}
