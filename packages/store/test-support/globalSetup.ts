/**
 * Vitest global setup for packages with integration tests: one PostgreSQL server per test run
 * (the embedded one in a temporary directory, or the server of `SVC_TEST_ADMIN_URL`), and one
 * migrated template database that every test file clones (TestDatabase.ts) so each file starts
 * clean in milliseconds instead of re-running migrations.
 *
 * With `SVC_TEST_VIA_POOLER=1` (`npm run test:pooler`, decision 0440) a PgBouncer in transaction mode is started in
 * front of that server and its URL put in `SVC_TEST_POOLER_URL`, through which TestDatabase.layer connects; the
 * template and the clones are still made on the server itself (the pooler only carries the tests' queries).
 */
import { Effect, Exit, Layer, Redacted, Scope } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as Database from "../src/db/Database.ts"
import * as DatabaseAdmin from "../src/db/DatabaseAdmin.ts"
import * as EmbeddedPostgres from "../src/db/EmbeddedPostgres.ts"
import * as PgBouncer from "./PgBouncer.ts"

const withDatabase = (url: string, database: string) => {
  const parsed = new URL(url)
  parsed.pathname = `/${database}`
  return parsed.toString()
}

export default async function setup() {
  const scope = Scope.makeUnsafe()
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "svc-test-pg-"))
  fs.chmodSync(dataDir, 0o755)
  const external = process.env["SVC_TEST_ADMIN_URL"]
  const adminUrl = external ?? Redacted.value(
    (await Effect.runPromise(Scope.provide(EmbeddedPostgres.start({ dataDir }), scope))).adminUrl
  )
  const template = `svc_template_${process.pid}_${Date.now().toString(36)}`
  await Effect.runPromise(Effect.gen(function*() {
    yield* DatabaseAdmin.dropDatabase(Redacted.make(adminUrl), template)
    yield* DatabaseAdmin.ensureDatabase(Redacted.make(adminUrl), template)
    // Build and close the migrated pool: a template must have no open connections when cloned.
    yield* Effect.scoped(Layer.build(Database.layerFromUrl(Redacted.make(withDatabase(adminUrl, template)))))
  }))
  process.env["SVC_TEST_ADMIN_URL"] = adminUrl
  process.env["SVC_TEST_TEMPLATE"] = template
  const pooler = process.env["SVC_TEST_VIA_POOLER"] === "1" ? await PgBouncer.start(adminUrl) : undefined
  if (pooler !== undefined) process.env["SVC_TEST_POOLER_URL"] = pooler.url
  return async () => {
    await pooler?.stop()
    await Effect.runPromise(
      DatabaseAdmin.dropDatabase(Redacted.make(adminUrl), template).pipe(Effect.ignore)
    )
    await Effect.runPromise(Scope.close(scope, Exit.void))
    fs.rmSync(dataDir, { recursive: true, force: true })
  }
}
