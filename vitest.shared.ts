// Vitest settings shared by every workspace package (each package's vitest.config.ts merges them).
import * as fs from "node:fs"
import * as path from "node:path"
import { defineConfig } from "vitest/config"

const packageDir = process.cwd()
// `npm run test:unit` sets SVC_TEST_UNIT_ONLY=true: the pure tests only, without PostgreSQL, Chromium or the
// built apps (seconds, for an edit loop); `npm test` runs everything. The Nx cache keys on it (tools/nx).
const unitOnly = process.env.SVC_TEST_UNIT_ONLY === "true"
const slowSuffixes = [".integration.test.ts", ".browser.test.ts"]
// `npm run test:pooler` sets SVC_TEST_VIA_POOLER=1: the integration tests again, through a PgBouncer in transaction
// mode that the global setup starts (decision 0440); the pure tests do not touch the database and ran already.
const viaPooler = process.env.SVC_TEST_VIA_POOLER === "1"
// Integration tests that never reach the pooler (they start servers or poolers of their own), left out of that run.
const notThroughPooler = [
  "test/db/EmbeddedPostgres.integration.test.ts",
  "test/db/EmbeddedPidNamespace.integration.test.ts",
  "test/db/ConnectionBudget.integration.test.ts",
  "test/db/TransactionPooler.integration.test.ts"
]
// Only packages with integration tests pay for a PostgreSQL server: one per test run (per package),
// with a migrated template database that each test file clones (see packages/store/test-support).
const hasIntegrationTests = !unitOnly && fs.existsSync(path.join(packageDir, "test")) &&
  fs.readdirSync(path.join(packageDir, "test"), { recursive: true })
    .some((f) => String(f).endsWith(".integration.test.ts"))

export default defineConfig({
  test: {
    include: viaPooler ? ["test/**/*.integration.test.ts"] : ["test/**/*.test.ts"],
    exclude: unitOnly
      ? ["**/node_modules/**", ...slowSuffixes.map((suffix) => `test/**/*${suffix}`)]
      : viaPooler
      ? ["**/node_modules/**", ...notThroughPooler]
      : ["**/node_modules/**"],
    globalSetup: hasIntegrationTests
      ? [path.resolve(import.meta.dirname, "packages/store/test-support/globalSetup.ts")]
      : [],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // A test that prints is a test that hides something: logs go through Effect's logger.
    onConsoleLog: () => false,
    sequence: { concurrent: false }
  }
})
