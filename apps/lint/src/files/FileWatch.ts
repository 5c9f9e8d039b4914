/**
 * What the resident linter knows has not changed (decision 0642): with a watch on every folder its
 * walks list, a file with no event since its `--cache` entry was last checked needs no `stat`.
 * Ten thousand `stat` calls were ~40 ms of a re-lint on the project machine, a quarter of the
 * 0.15 s goal; the watch's check is a few map lookups.
 *
 * The rules that make trusting a file as safe as a `stat`:
 *
 * - Barrier. Before a run, `sync` writes a cookie file into a watched folder of our own and waits
 *   for its event (as watchman does). One inotify queue serves every watch of the process, in the
 *   order the changes happened, so once the cookie's event is here, so is the event of every change
 *   made before the run began: the run sees what a run in a process of its own would.
 * - Generations. Each `sync` starts two: the barrier's (events received while waiting for the
 *   cookie: changes made before the run, which the run's checks see) and the run's. A file is trusted
 *   in a run when it was checked (stat or bytes) in an earlier run, its folder was watched since
 *   before that check, and neither it nor its folder has had an event since (an event received
 *   during or after the run that checked it counts against it: it may have come after the check).
 * - What a folder watch cannot see is never trusted: a symbolic link (its target changes elsewhere),
 *   a file with several hard links (written through another name), a file named on the command
 *   line, a folder replaced by another at the same path (its dev, inode and birth time are
 *   compared on every walk).
 * - Lost events. inotify drops events when its queue (`max_queued_events`, 16,384 by default) fills
 *   while the process is busy, and Node cannot see that it did. But libuv reads the whole queue in
 *   one go, so an overflow shows as at least a queue's worth of events in one turn of the event
 *   loop: when one turn brings half that many, every file loses its trust and the next run checks
 *   them all. A watch that errs, cannot be added (the user's watch limit) or a cookie that does not
 *   come back in time does the same for its folder or for everything.
 */
import * as fs from "node:fs"
import * as nodePath from "node:path"

/** What the walk and the cache ask of the watch. */
export interface FileWatch {
  /** Called for each folder a walk lists: watches it from now on (again, if it was replaced). */
  readonly folder: (dir: string) => void
  /** The barrier before a run; resolves with the run's generation. */
  readonly sync: () => Promise<number>
  /** Whether the file at `path` is known unchanged since it was last checked. */
  readonly trusted: (path: string) => boolean
  /** Records that the file at `path` was checked in this generation, with the stat it had. */
  readonly checked: (path: string, stat: fs.Stats) => void
  /** Ends every watch. */
  readonly close: () => void
  /**
   * How many barriers were lost so far (a cookie that did not come back in time, or could not be written): each
   * made the watch trust nothing. Tells a timed-out barrier from an overflow seen in time, which otherwise differ
   * only in how long `sync` took.
   */
  readonly barriersLost: () => number
}

/** How long `sync` waits for its cookie before distrusting everything. */
const COOKIE_TIMEOUT_MS = 2_000

const queueSize = (): number => {
  try {
    const value = Number(fs.readFileSync("/proc/sys/fs/inotify/max_queued_events", "utf8").trim())
    return Number.isInteger(value) && value > 0 ? value : 16_384
  } catch {
    return 16_384
  }
}

const identity = (stat: fs.Stats) => `${stat.dev}:${stat.ino}:${stat.birthtimeMs}`

interface Watched {
  readonly watcher: fs.FSWatcher
  readonly identity: string
  /** The generation in which the watch began. */
  readonly since: number
}

/**
 * A watch whose cookies go to `cookieDir` (a folder of our own: the socket folder). Returns
 * `undefined` when the cookie folder itself cannot be watched: then nothing is ever trusted.
 */
export const make = (cookieDir: string): FileWatch | undefined => {
  let generation = 0
  /** Checks before this generation are void (events may have been lost). */
  let floor = 1
  const folders = new Map<string, Watched>()
  /** The generation of each path's last event; a folder's own entry stands for all its files. */
  const events = new Map<string, number>()
  const folderEvents = new Map<string, number>()
  const checkedIn = new Map<string, number>()
  let watchesFailed = false
  const overflowAt = Math.max(1, Math.floor(queueSize() / 2))
  let inThisTurn = 0
  const cookies = new Map<string, () => void>()

  const distrustAll = () => {
    floor = generation + 1
  }
  const counted = () => {
    if (inThisTurn++ === 0) {
      setImmediate(() => {
        if (inThisTurn >= overflowAt) distrustAll()
        inThisTurn = 0
      })
    }
  }

  let cookieWatcher: fs.FSWatcher
  try {
    cookieWatcher = fs.watch(cookieDir, { persistent: false }, (_event, name) => {
      counted()
      if (name === null) return
      const resolve = cookies.get(name)
      if (resolve !== undefined) {
        cookies.delete(name)
        resolve()
      }
    })
    cookieWatcher.on("error", () => distrustAll())
  } catch {
    return undefined
  }

  const forget = (dir: string) => {
    const watched = folders.get(dir)
    if (watched === undefined) return
    folders.delete(dir)
    watched.watcher.close()
  }

  const folder = (dir: string) => {
    let stat: fs.Stats
    try {
      stat = fs.statSync(dir)
    } catch {
      return forget(dir)
    }
    const id = identity(stat)
    const known = folders.get(dir)
    if (known !== undefined && known.identity === id) return
    forget(dir)
    if (watchesFailed) return
    try {
      const prefix = dir.endsWith(nodePath.sep) ? dir : dir + nodePath.sep
      const watcher = fs.watch(dir, { persistent: false }, (_event, name) => {
        counted()
        if (name === null) folderEvents.set(dir, generation)
        else events.set(prefix + name, generation)
      })
      watcher.on("error", () => {
        folderEvents.set(dir, generation)
        forget(dir)
      })
      folders.set(dir, { watcher, identity: id, since: generation })
    } catch {
      // Most often the user's inotify watch limit: folders from here on are checked with stat.
      watchesFailed = true
    }
  }

  let cookieCount = 0
  let lost = 0
  const sync = async (): Promise<number> => {
    generation++ // the barrier's
    if (events.size > 1_000_000) {
      events.clear()
      distrustAll()
    }
    const name = `.svc-lint-cookie-${process.pid}-${++cookieCount}`
    const file = nodePath.join(cookieDir, name)
    const arrived = new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => {
        cookies.delete(name)
        resolve(false)
      }, COOKIE_TIMEOUT_MS)
      cookies.set(name, () => {
        clearTimeout(timer)
        resolve(true)
      })
    })
    try {
      fs.writeFileSync(file, "")
      // A lost cookie is a full queue: events were dropped.
      if (!(await arrived)) {
        lost++
        distrustAll()
      }
      fs.rmSync(file, { force: true })
    } catch {
      cookies.get(name)?.()
      lost++
      distrustAll()
    }
    // The cookie can arrive in the same read as a burst before it: let the overflow check of that
    // turn run (it was queued first) before the run looks.
    await new Promise((resolve) => setImmediate(resolve))
    return ++generation // the run's
  }

  const dirOf = (path: string) => path.slice(0, path.lastIndexOf(nodePath.sep)) || nodePath.sep

  const trusted = (path: string): boolean => {
    const at = checkedIn.get(path)
    if (at === undefined || at < floor || at >= generation) return false
    const dir = dirOf(path)
    const watched = folders.get(dir)
    if (watched === undefined || watched.since > at) return false
    return (events.get(path) ?? -1) < at && (folderEvents.get(dir) ?? -1) < at
  }

  const checked = (path: string, stat: fs.Stats) => {
    if (stat.isFile() && stat.nlink === 1) checkedIn.set(path, generation)
    else checkedIn.delete(path)
  }

  const close = () => {
    cookieWatcher.close()
    for (const dir of [...folders.keys()]) forget(dir)
  }

  return { folder, sync, trusted, checked, close, barriersLost: () => lost }
}
