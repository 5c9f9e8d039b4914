// Issue 16, item 6: `git clone` into root's home (mode 0700, the usual place on a container or a CI
// runner) and `npm start` as root exited with "SVC_DATA_DIR ... is not reachable by the user
// svc-postgres". Now the cluster (and, when needed, a copy of the PostgreSQL binaries) lives where
// svc-postgres can reach it, the data dir records where, and the user's directories keep their mode.
import { assert, describe, it } from "@effect/vitest"
import { EmbeddedPostgres } from "@svc/store"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { alive, eventually, freePort, killTree, npm, postmasterOf, root, waitFor } from "./support/Svc.ts"

const isRoot = process.getuid?.() === 0

describe("a checkout under a private directory", () => {
  it(
    isRoot
      ? "as root, npm start works from a checkout under a 0700 directory and with SVC_DATA_DIR under mktemp -d"
      : "as a normal user, npm start works from a checkout under a 0700 directory of the user's own",
    async () => {
      // Beside root's home, on the same filesystem as this checkout, so node_modules can be hard-linked.
      const home = fs.mkdtempSync(path.join(os.tmpdir(), "svc-home-"))
      assert.strictEqual(fs.statSync(home).mode & 0o777, 0o700)
      const checkout = path.join(home, "svc")
      const dataDirs: Array<string> = []
      try {
        const clone = spawnSync("git", ["clone", "--quiet", root, checkout], { encoding: "utf8" })
        assert.strictEqual(clone.status, 0, clone.stderr)
        // What the first run would install, without fetching it again.
        // (.toolchain exists only where the machine's Node was too old for the bootstrap)
        for (const dir of ["node_modules", ".toolchain"].filter((d) => fs.existsSync(path.join(root, d)))) {
          const link = spawnSync("cp", ["-al", path.join(root, dir), path.join(checkout, dir)], { encoding: "utf8" })
          assert.strictEqual(link.status, 0, link.stderr)
        }
        fs.utimesSync(path.join(checkout, "node_modules", ".package-lock.json"), new Date(), new Date())

        const private_ = fs.mkdtempSync(path.join(os.tmpdir(), "svc-mktemp-"))
        for (
          const [label, env, dataDir] of [
            ["default .svc in the checkout", {}, path.join(checkout, ".svc")],
            ["SVC_DATA_DIR under mktemp -d", { SVC_DATA_DIR: private_ }, private_]
          ] as const
        ) {
          dataDirs.push(dataDir)
          const port = await freePort()
          const svc = npm(["start"], { PORT: String(port), ...env }, checkout)
          try {
            const ready = await waitFor(`http://127.0.0.1:${port}/readyz`, 120_000, (s) => s === 200).catch((error) => {
              throw new Error(`${label}: ${error}\n${svc.output()}`)
            })
            assert.strictEqual(ready.status, 200, label)
            const layout = EmbeddedPostgres.layout(dataDir)
            const pg = postmasterOf(layout.pgdata)
            assert.isDefined(pg, label)
            if (isRoot) {
              assert.isDefined(layout.externalHome, `${label}: the cluster lives where svc-postgres can reach it`)
            } else {
              assert.strictEqual(layout.pgdata, path.join(dataDir, "pg"))
            }
            assert.strictEqual(fs.statSync(home).mode & 0o777, 0o700, `${label}: the home stays private`)
            assert.strictEqual(fs.statSync(private_).mode & 0o777, 0o700, `${label}: the mktemp dir stays private`)
            svc.child.kill("SIGTERM")
            assert.strictEqual(await svc.exited, 0, svc.output())
            assert.isTrue(await eventually(() => !alive(pg), 30_000), `${label}: no postgres left`)
          } finally {
            killTree(svc.child.pid)
          }
        }
      } finally {
        for (const dataDir of dataDirs) {
          const external = fs.existsSync(dataDir) ? EmbeddedPostgres.layout(dataDir).externalHome : undefined
          if (external !== undefined) fs.rmSync(external, { recursive: true, force: true })
          fs.rmSync(dataDir, { recursive: true, force: true })
        }
        fs.rmSync(home, { recursive: true, force: true })
      }
    },
    300_000
  )
})
