import { assert, describe, it } from "@effect/vitest"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import * as FileWatch from "../../src/files/FileWatch.ts"
import { tempDir, writeTree } from "../support/Harness.ts"

// The watch that lets the resident linter skip a file's stat (decision 0642), on the real file
// system: trusted only when nothing happened to the file since it was checked, and never when an
// event could have been missed.

const setUp = () => {
  const dir = writeTree(tempDir(), { "a.json": "{}\n", "b.json": "{}\n", "sub/c.json": "{}\n" })
  const watch = FileWatch.make(tempDir())
  assert.isDefined(watch)
  return { dir, watch: watch! }
}

/** Checks `file` in the current generation, as the cache does after a stat. */
const check = (watch: FileWatch.FileWatch, file: string) => watch.checked(file, fs.statSync(file))

describe("FileWatch", () => {
  it("trusts a file checked in an earlier run with no event since; not after a write, a replace, a touch or a chmod", async () => {
    const { dir, watch } = setUp()
    const a = path.join(dir, "a.json")
    const b = path.join(dir, "b.json")
    watch.folder(dir)
    await watch.sync()
    check(watch, a)
    assert.isFalse(watch.trusted(a), "checked in this very run")
    await watch.sync()
    assert.isTrue(watch.trusted(a))
    assert.isFalse(watch.trusted(b), "never checked")

    const changes: ReadonlyArray<[string, () => void]> = [
      ["a write", () => fs.appendFileSync(a, " ")],
      ["a file renamed over it", () => {
        fs.writeFileSync(path.join(dir, "a.tmp"), "{\"x\": 1}\n")
        fs.renameSync(path.join(dir, "a.tmp"), a)
      }],
      ["a touch", () => fs.utimesSync(a, new Date(2020, 0, 1), new Date(2020, 0, 1))],
      ["a chmod", () => fs.chmodSync(a, 0o600)],
      ["a delete and re-create", () => {
        fs.rmSync(a)
        fs.writeFileSync(a, "{}\n")
      }]
    ]
    for (const [what, change] of changes) {
      change()
      await watch.sync()
      assert.isFalse(watch.trusted(a), `after ${what}, made just before the run`)
      check(watch, a)
      await watch.sync()
      assert.isTrue(watch.trusted(a), `checked again after ${what}`)
    }
    // A change made after the run that checked the file, before the next one's barrier.
    check(watch, b)
    fs.appendFileSync(b, " ")
    await watch.sync()
    assert.isFalse(watch.trusted(b))
    watch.close()
  })

  it("never trusts a hard-linked file or one in an unwatched folder, and re-watches a folder replaced at its path", async () => {
    const { dir, watch } = setUp()
    const a = path.join(dir, "a.json")
    const c = path.join(dir, "sub", "c.json")
    watch.folder(dir)
    await watch.sync()
    check(watch, c)
    await watch.sync()
    assert.isFalse(watch.trusted(c), "its folder is not watched")

    fs.linkSync(a, path.join(tempDir(), "other-name.json"))
    check(watch, a)
    await watch.sync()
    assert.isFalse(watch.trusted(a), "a second name elsewhere can change it unseen")

    watch.folder(path.join(dir, "sub"))
    await watch.sync()
    check(watch, c)
    await watch.sync()
    assert.isTrue(watch.trusted(c))
    // The folder moved away and another made at its path, with a file of the same name.
    fs.renameSync(path.join(dir, "sub"), path.join(dir, "moved"))
    writeTree(dir, { "sub/c.json": "{}\n" })
    await watch.sync()
    watch.folder(path.join(dir, "sub"))
    assert.isFalse(watch.trusted(c), "the new folder's file was never checked under a watch")
    watch.close()
  })

  it(
    "trusts nothing after a turn of the event loop brings half an inotify queue (events may have been lost)",
    async () => {
      const { dir, watch } = setUp()
      const a = path.join(dir, "a.json")
      const burst = path.join(dir, "sub")
      watch.folder(dir)
      watch.folder(burst)
      await watch.sync()
      check(watch, a)
      await watch.sync()
      assert.isTrue(watch.trusted(a))

      // A small burst is not a lost event.
      assert.strictEqual(spawnSync("sh", ["-c", "seq 1 200 | xargs touch"], { cwd: burst }).status, 0)
      await watch.sync()
      assert.isTrue(watch.trusted(a), "200 events in one turn dropped every file's trust")

      // 20,000 new files while this process is blocked (spawnSync): more events than inotify's queue
      // holds, so some are dropped; the watch cannot tell which, and gives up every file.
      const queue = Number(fs.readFileSync("/proc/sys/fs/inotify/max_queued_events", "utf8"))
      const files = Math.max(20_000, queue + 4_000)
      const overflow = (prefix: string) => {
        const made = spawnSync("sh", ["-c", `seq 1 ${files} | sed 's/^/${prefix}/' | xargs touch`], { cwd: burst })
        assert.strictEqual(made.status, 0, made.stderr.toString())
      }
      // Drained by the event loop before the next run: seen as one turn with a queue's worth of events.
      overflow("f")
      await new Promise((resolve) => setImmediate(resolve))
      await new Promise((resolve) => setImmediate(resolve))
      // The barrier's cookie came back (the queue was drained): the overflow was seen by counting the turn's
      // events, not inferred from a lost barrier. (A wall-clock bound on `sync` once stood for this.)
      await watch.sync()
      assert.strictEqual(watch.barriersLost(), 0, "the barrier's cookie was lost: this case is the one below")
      assert.isFalse(watch.trusted(a), "a file outside the burst kept its trust after an overflow")
      check(watch, a)
      await watch.sync()
      assert.isTrue(watch.trusted(a), "checked again after the overflow")
      // The next run straight after the burst: the queue is still full and drops the barrier's cookie.
      overflow("g")
      await watch.sync()
      assert.isFalse(watch.trusted(a), "a file outside the burst kept its trust after an overflow")
      watch.close()
    },
    60_000
  )

  it("trusts nothing when its barrier cannot be written", async () => {
    const dir = writeTree(tempDir(), { "a.json": "{}\n" })
    const cookies = tempDir()
    const watch = FileWatch.make(cookies)!
    const a = path.join(dir, "a.json")
    watch.folder(dir)
    await watch.sync()
    check(watch, a)
    await watch.sync()
    assert.isTrue(watch.trusted(a))
    fs.rmSync(cookies, { recursive: true })
    await watch.sync()
    assert.isFalse(watch.trusted(a), "a run without a barrier cannot know what changed before it")
    watch.close()
  })
})
