// Issue 16, item 5: `npm start & kill -TERM $!` left the server running with its port held (npm
// passed SIGTERM to its script's shell, which died without passing it on). Whichever process of the
// tree gets SIGINT or SIGTERM (npm, the bootstrap, the real node process), svc stops gracefully and
// leaves nothing running: no process of the tree, no postgres, the port free.
import { assert, describe, it } from "@effect/vitest"
import { EmbeddedPostgres } from "@svc/store"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import {
  alive,
  eventually,
  freePort,
  killTree,
  listening,
  npm,
  postmasterOf,
  root,
  tempDataDir,
  tree,
  waitFor
} from "./support/Svc.ts"

const targets = {
  npm: (_: string) => true,
  bootstrap: (cmdline: string) => cmdline.includes("bootstrap.cjs"),
  node: (cmdline: string) => cmdline.includes("tools/start/main.ts")
} as const

describe("npm start under signals", () => {
  const dataDir = tempDataDir("svc-signals-")

  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    for (const target of Object.keys(targets) as Array<keyof typeof targets>) {
      it(`${signal} to ${target} stops everything`, async () => {
        const port = await freePort()
        const svc = npm(["start"], { PORT: String(port), SVC_DATA_DIR: dataDir })
        try {
          assert.strictEqual((await waitFor(`http://127.0.0.1:${port}/readyz`, 90_000, (s) => s === 200)).status, 200)
          const processes = tree(svc.child.pid!)
          const roles = {
            npm: processes[0]!,
            bootstrap: processes.find((p) => targets.bootstrap(p.cmdline)),
            node: processes.find((p) => targets.node(p.cmdline))
          }
          assert.isDefined(roles.bootstrap, JSON.stringify(processes))
          assert.isDefined(roles.node, JSON.stringify(processes))
          // The scripts exec the bootstrap: no shell sits between npm and it to swallow a signal.
          assert.isUndefined(processes.find((p) => /^(\/bin\/)?sh /.test(p.cmdline)), JSON.stringify(processes))
          const postgres = postmasterOf(EmbeddedPostgres.layout(dataDir).pgdata)
          assert.isDefined(postgres)

          process.kill(roles[target]!.pid, signal)

          assert.isTrue(
            await eventually(() => processes.every((p) => !alive(p.pid)), 30_000),
            `still running: ${JSON.stringify(processes.filter((p) => alive(p.pid)))}\n${svc.output()}`
          )
          assert.isFalse(alive(postgres), "no postgres left")
          assert.isFalse(await listening(port), "the port is free")
          // A graceful stop, not a kill: the scheduler handed its work back and said so.
          assert.include(svc.output(), "svc-scheduler stopped")
        } finally {
          killTree(svc.child.pid)
        }
      }, 120_000)
    }
  }

  it(
    "SIGTERM to a shell that wraps the bootstrap (a user's own script) stops everything: the orphaned bootstrap forwards it",
    async () => {
      const port = await freePort()
      // A shell that runs the bootstrap as a child (not exec): it dies of SIGTERM without passing it on.
      const wrapper = spawn("sh", ["-c", "node tools/bootstrap/bootstrap.cjs start:svc; echo done"], {
        cwd: root,
        env: { ...process.env, LOG_LEVEL: "Info", PORT: String(port), SVC_DATA_DIR: dataDir },
        stdio: ["ignore", "pipe", "pipe"]
      })
      let output = ""
      wrapper.stdout.on("data", (chunk) => (output += chunk))
      wrapper.stderr.on("data", (chunk) => (output += chunk))
      try {
        await waitFor(`http://127.0.0.1:${port}/readyz`, 90_000, (s) => s === 200)
        const processes = tree(wrapper.pid!)
        assert.isDefined(processes.find((p) => p.cmdline.includes("tools/start/main.ts")), JSON.stringify(processes))
        const postgres = postmasterOf(EmbeddedPostgres.layout(dataDir).pgdata)
        process.kill(wrapper.pid!, "SIGTERM")
        assert.isTrue(
          await eventually(() => processes.every((p) => !alive(p.pid)), 30_000),
          `still running: ${JSON.stringify(processes.filter((p) => alive(p.pid)))}\n${output}`
        )
        assert.isFalse(alive(postgres), "no postgres left")
        assert.isFalse(await listening(port), "the port is free")
      } finally {
        killTree(wrapper.pid)
      }
    },
    120_000
  )

  it("cleans up", () => {
    fs.rmSync(dataDir, { recursive: true, force: true })
  })
})
