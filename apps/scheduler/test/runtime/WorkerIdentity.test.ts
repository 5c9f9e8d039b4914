import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { spawn, spawnSync } from "node:child_process"
import * as os from "node:os"
import * as WorkerIdentity from "../../src/runtime/WorkerIdentity.ts"

const token = WorkerIdentity.namespaceToken()
const idFor = (pid: number, ns = token) => `${os.hostname()}:${pid}:abc123@${ns}`

/** The pid of a process that has run and been reaped. */
const deadPid = () => spawnSync(process.execPath, ["-e", ""]).pid

describe("WorkerIdentity", () => {
  it("a default id names the host, the pid and the pid namespace", () => {
    assert.isDefined(token, "Linux: /proc gives the boot id and the pid namespace")
    assert.match(token!, /^[0-9a-f]{12}$/)
    const id = WorkerIdentity.newWorkerId()
    assert.match(id, new RegExp(`^${os.hostname()}:${process.pid}:[a-z0-9]{1,6}@${token}$`))
    assert.notStrictEqual(WorkerIdentity.newWorkerId(), id, "unique per call")
  })

  it.effect("a worker whose process has exited is gone; one whose process runs is not", () =>
    Effect.gen(function*() {
      const self = WorkerIdentity.newWorkerId()
      assert.isTrue(WorkerIdentity.isGone(idFor(deadPid()), self))
      const child = spawn(process.execPath, ["-e", "setInterval(() => {}, 60000)"], { stdio: "ignore" })
      const exited = new Promise((resolve) => child.once("exit", resolve))
      assert.isFalse(WorkerIdentity.isGone(idFor(child.pid!), self))
      child.kill("SIGKILL")
      yield* Effect.promise(() => exited)
      assert.isTrue(WorkerIdentity.isGone(idFor(child.pid!), self))
    }))

  it("never judged gone when that cannot be known: itself, a sibling in this process, another namespace, a configured id", () => {
    const self = WorkerIdentity.newWorkerId()
    const dead = deadPid()
    assert.isFalse(WorkerIdentity.isGone(self, self))
    assert.isFalse(WorkerIdentity.isGone(WorkerIdentity.newWorkerId(), self), "another worker of this process")
    assert.isFalse(WorkerIdentity.isGone(idFor(dead, "0123456789ab"), self), "another machine or container")
    assert.isFalse(WorkerIdentity.isGone(`${os.hostname()}:${dead}:abc123`, self), "no namespace token")
    assert.isFalse(WorkerIdentity.isGone(`crash-worker-${dead}`, self), "a configured SCHEDULER_WORKER_ID")
    assert.isFalse(WorkerIdentity.isGone(idFor(0), self))
    assert.isFalse(WorkerIdentity.isGone(`${os.hostname()}:99999999999999999999:abc123@${token}`, self))
    assert.isFalse(WorkerIdentity.isGone(idFor(process.ppid), self), "the parent runs")
  })
})
