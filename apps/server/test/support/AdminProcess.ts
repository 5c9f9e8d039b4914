/**
 * The admin CLI as an operator runs it, for the admin tests: a separate `node src/admin.ts …` process against a
 * database of its own (made from the test template, named for the test file), through DATABASE_URL.
 */
import { DatabaseAdmin } from "@svc/store"
import * as TestDatabase from "@svc/store/test-support/TestDatabase.ts"
import { Effect, Redacted } from "effect"
import { spawnSync } from "node:child_process"
import * as path from "node:path"

const admin = path.resolve(import.meta.dirname, "..", "..", "src", "admin.ts")

/** What one admin command printed and how it exited. */
export interface AdminResult {
  readonly status: number | null
  readonly stdout: string
  readonly stderr: string
}

/**
 * A fresh database `name` (dropped first if a previous run left it) and a runner of admin commands on it; the URL is
 * given too, for tests that also read the database.
 */
export const adminProcess = (name: string) => {
  const databaseUrl = Effect.runPromise(Effect.gen(function*() {
    const url = yield* TestDatabase.adminUrl
    const database = `${name}_${process.pid}`
    yield* DatabaseAdmin.dropDatabase(url, database)
    yield* DatabaseAdmin.ensureDatabase(url, database, process.env["SVC_TEST_TEMPLATE"])
    return Redacted.value(TestDatabase.urlFor(url, database))
  }))
  const run = async (...args: Array<string>): Promise<AdminResult> => {
    const result = spawnSync(process.execPath, [admin, ...args], {
      encoding: "utf8",
      env: { ...process.env, DATABASE_URL: await databaseUrl, LOG_LEVEL: "Warn" }
    })
    return { status: result.status, stdout: result.stdout, stderr: result.stderr }
  }
  return { databaseUrl, run }
}
