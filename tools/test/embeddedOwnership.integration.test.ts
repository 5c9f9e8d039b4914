// Issue 16, item 1: `npm run admin -- …` started the embedded PostgreSQL, `npm start` launched at the
// same moment joined it, the admin command exited 150 ms later and stopped PostgreSQL under the
// server. Whoever starts the cluster must not stop it while another process uses it.
import { assert, describe, it } from "@effect/vitest"
import { EmbeddedPostgres } from "@svc/store"
import * as fs from "node:fs"
import * as path from "node:path"
import { admin, alive, eventually, freePort, killTree, npm, postmasterOf, tempDataDir, waitFor } from "./support/Svc.ts"

describe("one embedded cluster, many processes", () => {
  it("an admin command racing a server start exits without stopping the database under the server", async () => {
    const dataDir = tempDataDir("svc-race-")
    const port = await freePort()
    const env = { PORT: String(port), SVC_DATA_DIR: dataDir }
    // Both start at the same moment on a fresh data dir: either may be the one that starts PostgreSQL.
    const creating = admin(["create-org", "--name", "Race"], env)
    const svc = npm(["start"], env)
    try {
      const created = await creating
      assert.strictEqual(created.code, 0, created.output)
      const orgId = created.json["org_id"] as string
      assert.strictEqual((await waitFor(`http://127.0.0.1:${port}/readyz`, 90_000, (s) => s === 200)).status, 200)
      // Several short commands come and go while the server runs.
      for (let i = 0; i < 3; i++) {
        const key = await admin(["create-api-key", "--org", orgId], env)
        assert.strictEqual(key.code, 0, key.output)
      }
      // No grace period to wait out: a command that wrongly stopped the database would have done it before it
      // exited (the stop waits until the postmaster is gone: embedded/Postmaster.stopCluster)
      const pg = postmasterOf(EmbeddedPostgres.layout(dataDir).pgdata)
      assert.isDefined(pg, "the database still runs after every admin command exited")
      assert.strictEqual((await fetch(`http://127.0.0.1:${port}/readyz`)).status, 200)
      const key = (await admin(["create-api-key", "--org", orgId], env)).json["api_key"] as string
      const listed = await fetch(`http://127.0.0.1:${port}/list-contacts`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: "{}"
      })
      assert.strictEqual(listed.status, 200, await listed.text())
      assert.notInclude(svc.output(), "Connection closed")
      svc.child.kill("SIGTERM")
      assert.strictEqual(await svc.exited, 0, svc.output())
      assert.isFalse(alive(pg), "the server, the last client, stopped the database")
    } finally {
      killTree(svc.child.pid)
      fs.rmSync(dataDir, { recursive: true, force: true })
    }
  }, 180_000)

  it("the server exiting while an admin import runs leaves the database to the import, which completes", async () => {
    const dataDir = tempDataDir("svc-import-")
    const port = await freePort()
    const env = { PORT: String(port), SVC_DATA_DIR: dataDir }
    const svc = npm(["start"], env)
    try {
      await waitFor(`http://127.0.0.1:${port}/readyz`, 90_000, (s) => s === 200)
      const orgId = (await admin(["create-org", "--name", "Import"], env)).json["org_id"] as string
      const file = path.join(dataDir, "contacts.jsonl")
      const lines: Array<string> = []
      for (let i = 0; i < 20_000; i++) {
        lines.push(
          JSON.stringify({ phone_number: `+1415${String(1_000_000 + i).padStart(7, "0")}`, first_name: `C${i}` })
        )
      }
      fs.writeFileSync(file, lines.join("\n") + "\n")
      const importing = npm([
        "run",
        "--silent",
        "admin",
        "--",
        "import",
        "--org",
        orgId,
        "--kind",
        "contacts",
        "--file",
        file
      ], env)
      // Stop the server once the import has joined the database (it is one of the cluster's clients).
      const clients = EmbeddedPostgres.layout(dataDir).clients
      assert.isTrue(
        await eventually(() => fs.existsSync(clients) && fs.readdirSync(clients).length >= 2, 60_000),
        importing.output()
      )
      const pg = postmasterOf(EmbeddedPostgres.layout(dataDir).pgdata)
      svc.child.kill("SIGTERM")
      assert.strictEqual(await svc.exited, 0, svc.output())
      const code = await importing.exited
      assert.strictEqual(code, 0, importing.output())
      assert.deepStrictEqual(JSON.parse(importing.stdout().trim().split("\n").at(-1)!), { imported: 20_000 })
      assert.isTrue(await eventually(() => !alive(pg), 30_000), "the import, the last client, stopped the database")
    } finally {
      killTree(svc.child.pid)
      fs.rmSync(dataDir, { recursive: true, force: true })
    }
  }, 240_000)
})
