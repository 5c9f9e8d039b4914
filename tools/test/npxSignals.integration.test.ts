// Issue 27, item 4: production replicas start `npx svc-server` / `npx svc-scheduler` from the checkout (README),
// and there SIGTERM to the npx process orphaned the node process (still serving or dialling, holding the database)
// and SIGINT stopped nothing: npm runs a bin as `sh -c <bin>`, and dash forks the bin, keeps the SIGINT npm forwards
// to it, and dies of SIGTERM without passing it on. Whichever process of the tree gets SIGINT or SIGTERM, the bin
// now stops with its whole tree, as `npm start` does (decisions 0010 and 0015). Started exactly as the README says:
// `npx <bin>` in the checkout, through npm's own config (the checkout's .npmrc).
import { assert, beforeAll, describe, it } from "@effect/vitest"
import { EmbeddedPostgres } from "@svc/store"
import { spawn, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import {
  alive,
  eventually,
  freePort,
  killTree,
  listening,
  postmasterOf,
  root,
  type Running,
  tempDataDir,
  tree,
  waitFor
} from "./support/Svc.ts"

/** `npx <args>` in the checkout, as an operator types it; output collected. */
const npx = (args: ReadonlyArray<string>, env: Record<string, string>): Running => {
  let output = ""
  let stdout = ""
  const child = spawn("npx", [...args], {
    cwd: root,
    env: { ...process.env, LOG_LEVEL: "Info", ...env },
    stdio: ["ignore", "pipe", "pipe"]
  })
  child.stdout.on("data", (chunk) => {
    output += chunk
    stdout += chunk
  })
  child.stderr.on("data", (chunk) => (output += chunk))
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)))
  return { child, output: () => output, stdout: () => stdout, exited }
}

type Proc = ReturnType<typeof tree>[number]

const show = (processes: ReadonlyArray<Proc>) => JSON.stringify(processes.map((p) => `${p.pid} ${p.cmdline}`))

/** The tree's members by role: npm (the npx process itself) and the bin's node process. */
const rolesOf = (processes: ReadonlyArray<Proc>, bin: string) => {
  const npm = processes[0]!
  const node = processes.find((p) => p !== npm && p.cmdline.includes(`.bin/${bin}`))
  assert.isTrue(npm.cmdline.startsWith(`npm exec ${bin}`), show(processes))
  assert.isDefined(node, show(processes))
  return { npm, node: node! }
}

/**
 * No shell sits between npm and the bin to keep the signals npm forwards (the checkout's .npmrc makes bash npm's
 * script shell, and bash execs a single command). Asserted after the signal's effects, which are the point.
 */
const assertNoShell = (processes: ReadonlyArray<Proc>) =>
  assert.isUndefined(processes.find((p) => /^(\S*\/)?(sh|dash|bash) -c /.test(p.cmdline)), show(processes))

const stopsEverything = async (
  svc: Running,
  processes: ReadonlyArray<Proc>,
  deadlineMs = 30_000
) =>
  assert.isTrue(
    await eventually(() => processes.every((p) => !alive(p.pid)), deadlineMs),
    `still running: ${show(processes.filter((p) => alive(p.pid)))}\n${svc.output()}`
  )

describe("npx svc-server under signals", () => {
  const dataDir = tempDataDir("svc-npx-server-")

  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    for (const target of ["npm", "node"] as const) {
      it(`${signal} to ${target} stops the tree, the database and the port`, async () => {
        const port = await freePort()
        const svc = npx(["svc-server"], { PORT: String(port), SVC_DATA_DIR: dataDir })
        try {
          await waitFor(`http://127.0.0.1:${port}/readyz`, 90_000, (s) => s === 200)
          const processes = tree(svc.child.pid!)
          const roles = rolesOf(processes, "svc-server")
          const postgres = postmasterOf(EmbeddedPostgres.layout(dataDir).pgdata)
          assert.isDefined(postgres)

          process.kill(roles[target].pid, signal)

          await stopsEverything(svc, processes)
          // The server was the database's last client: only its graceful stop (the scope closing) stops it.
          assert.isTrue(await eventually(() => !alive(postgres), 30_000), "no postgres left")
          assert.isFalse(await listening(port), "the port is free")
          assertNoShell(processes)
        } finally {
          killTree(svc.child.pid)
        }
      }, 120_000)
    }
  }

  // A user's npm config may name a shell that forks (dash): SIGTERM then kills the shell, which does not pass it on.
  // The server sees its parent go and stops as if it had been sent SIGTERM (packages/runtime Main.ts). SIGINT
  // cannot be helped there: dash keeps it while it waits (docs/decisions/0015-npx-bins-signals.md).
  for (const target of ["npm", "shell"] as const) {
    it(
      `with a forking script shell (dash), SIGTERM to ${target} stops the tree, the database and the port`,
      async () => {
        const port = await freePort()
        const svc = npx(["svc-server"], {
          PORT: String(port),
          SVC_DATA_DIR: dataDir,
          npm_config_script_shell: "/bin/sh"
        })
        try {
          await waitFor(`http://127.0.0.1:${port}/readyz`, 90_000, (s) => s === 200)
          const processes = tree(svc.child.pid!)
          const roles = rolesOf(processes, "svc-server")
          const shell = processes.find((p) => /^(\/bin\/)?sh -c /.test(p.cmdline))
          assert.isDefined(shell, `the forking shell this case is about: ${show(processes)}`)
          const postgres = postmasterOf(EmbeddedPostgres.layout(dataDir).pgdata)

          process.kill(target === "npm" ? roles.npm.pid : shell!.pid, "SIGTERM")

          await stopsEverything(svc, processes)
          assert.isTrue(await eventually(() => !alive(postgres), 30_000), "no postgres left")
          assert.isFalse(await listening(port), "the port is free")
        } finally {
          killTree(svc.child.pid)
        }
      },
      120_000
    )
  }

  it("cleans up", () => {
    fs.rmSync(dataDir, { recursive: true, force: true })
  })
})

describe("npx svc-scheduler under signals", () => {
  const dataDir = tempDataDir("svc-npx-scheduler-")

  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    for (const target of ["npm", "node"] as const) {
      it(`${signal} to ${target} stops the tree and the database; the worker hands its work back`, async () => {
        const svc = npx(["svc-scheduler"], { SVC_DATA_DIR: dataDir })
        try {
          assert.isTrue(
            await eventually(() => svc.output().includes("svc-scheduler started"), 90_000),
            `the scheduler did not start: ${svc.output()}`
          )
          const processes = tree(svc.child.pid!)
          const roles = rolesOf(processes, "svc-scheduler")
          const postgres = postmasterOf(EmbeddedPostgres.layout(dataDir).pgdata)
          assert.isDefined(postgres)

          process.kill(roles[target].pid, signal)

          await stopsEverything(svc, processes)
          assert.isTrue(await eventually(() => !alive(postgres), 30_000), "no postgres left")
          assert.include(svc.output(), "svc-scheduler stopped", "a graceful stop, not a kill")
          assertNoShell(processes)
        } finally {
          killTree(svc.child.pid)
        }
      }, 120_000)
    }
  }

  it("cleans up", () => {
    fs.rmSync(dataDir, { recursive: true, force: true })
  })
})

/** What bin/svc-lint.mjs checks before it runs the snapshot: built by this Node, after every source it was made of. */
const snapshotCurrent = () => {
  const dist = path.join(root, "apps", "lint", "dist")
  const newest = (dir: string): number =>
    fs.readdirSync(dir, { withFileTypes: true }).reduce(
      (most, entry) =>
        Math.max(
          most,
          entry.isDirectory() ? newest(path.join(dir, entry.name)) : fs.statSync(path.join(dir, entry.name)).mtimeMs
        ),
      0
    )
  try {
    const info = JSON.parse(fs.readFileSync(path.join(dist, "svc-lint.blob.json"), "utf8")) as { node?: string }
    const sources = Math.max(
      newest(path.join(root, "apps", "lint", "src")),
      newest(path.join(root, "packages", "domain", "src"))
    )
    return info.node === process.version && fs.statSync(path.join(dist, "svc-lint.blob")).mtimeMs >= sources
  } catch {
    return false
  }
}

describe("npx svc-lint under signals", () => {
  const corpus = fs.mkdtempSync(path.join(os.tmpdir(), "svc-npx-lint-"))

  beforeAll(() => {
    // Enough files that a run takes seconds; the test freezes the tree as soon as it sees it, so the size only
    // has to outlast a scan of /proc.
    for (let i = 0; i < 400; i++) {
      const lines = Array.from(
        { length: 200 },
        (_, j) => `export const call${j} = () => fetch("https://api.example.com/list-agents?page=${i}-${j}")`
      )
      fs.writeFileSync(path.join(corpus, `client${i}.ts`), lines.join("\n") + "\n")
    }
    // The start-up snapshot runs the linter in a child process (bin/svc-lint.mjs), and only while it is current.
    // Nx builds it before this package's tests (tools/package.json); the build here is for a run of this file
    // alone after an edit. Never when it is current: @svc/lint's own tests run beside these under Nx, and a rebuild
    // under them changes the snapshot's identity, and so the resident linter's socket, mid-test (a CI failure of
    // Daemon.test.ts).
    if (!snapshotCurrent()) {
      const build = spawnSync("npm", ["run", "build", "-w", "@svc/lint"], { cwd: root, encoding: "utf8" })
      assert.strictEqual(build.status, 0, `${build.stdout}\n${build.stderr}`)
    }
    assert.isTrue(snapshotCurrent(), "apps/lint/dist/svc-lint.blob is built for this Node and newer than its sources")
  }, 180_000)

  /**
   * Starts `npx svc-lint` on the corpus and stops every process of its tree (SIGSTOP) the moment the tree is
   * complete, so that none of them can finish before the signal; `undefined` when the run ended first.
   */
  const frozenRun = async (snapshot: boolean) => {
    const svc = npx(["svc-lint", "--as-of", "2026-11-01", "-f", "json", corpus], {
      ...(snapshot ? {} : { SVC_LINT_NO_SNAPSHOT: "1" })
    })
    const complete = (processes: ReadonlyArray<Proc>) => {
      const bin = processes.find((p) => p.cmdline.includes(".bin/svc-lint"))
      const child = processes.find((p) => p.cmdline.includes("--snapshot-blob"))
      return bin !== undefined && (!snapshot || child !== undefined)
    }
    let ended = false
    void svc.exited.then(() => (ended = true))
    for (const deadline = Date.now() + 60_000; Date.now() < deadline && !ended;) {
      const processes = tree(svc.child.pid!)
      if (complete(processes)) {
        for (const p of processes) process.kill(p.pid, "SIGSTOP")
        // Frozen: the tree cannot change any more until SIGCONT.
        const frozen = tree(svc.child.pid!)
        if (complete(frozen)) return { svc, processes: frozen }
        for (const p of processes) process.kill(p.pid, "SIGCONT")
      }
      await new Promise((resolve) => setImmediate(resolve))
    }
    killTree(svc.child.pid)
    assert.fail(`the tree of npx svc-lint was never seen complete (ended: ${ended}):\n${svc.output()}`)
  }

  for (const snapshot of [true, false]) {
    const targets = snapshot ? ["npm", "node", "snapshot child"] as const : ["npm", "node"] as const
    for (const signal of ["SIGTERM", "SIGINT"] as const) {
      for (const target of targets) {
        it(
          `${
            snapshot ? "from the snapshot" : "in the bin's process"
          }: ${signal} to ${target} stops the run and its tree`,
          async () => {
            const { processes, svc } = (await frozenRun(snapshot))!
            try {
              const roles = rolesOf(processes, "svc-lint")
              const child = processes.find((p) => p.cmdline.includes("--snapshot-blob"))
              const victim = target === "npm" ? roles.npm : target === "node" ? roles.node : child!

              process.kill(victim.pid, signal)
              for (const p of processes) process.kill(p.pid, "SIGCONT")

              await stopsEverything(svc, processes)
              const code = await svc.exited
              // Stopped by the signal, not finished: a finished run prints its JSON report and exits 1 (problems).
              assert.notInclude(svc.stdout(), "list-agents", "the run was stopped before it reported")
              assert.notStrictEqual(code, 1, svc.output())
              assertNoShell(processes)
              if (snapshot) assert.strictEqual(processes.length, 3, show(processes))
            } finally {
              for (const p of processes) {
                try {
                  process.kill(p.pid, "SIGCONT")
                } catch {
                  // gone
                }
              }
              killTree(svc.child.pid)
            }
          },
          120_000
        )
      }
    }
  }

  it("cleans up", () => {
    fs.rmSync(corpus, { recursive: true, force: true })
  })
})
