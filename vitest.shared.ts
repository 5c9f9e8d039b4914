// Vitest settings shared by every workspace package (each package's vitest.config.ts merges them).
import * as fs from "node:fs"
import * as path from "node:path"
import { defineConfig } from "vitest/config"

const packageDir = process.cwd()
// `npm run test:unit` sets SVC_TEST_UNIT_ONLY=true: the pure tests only, without PostgreSQL, Chromium or the
// built apps (seconds, for an edit loop); `npm test` runs everything. The Nx cache keys on it (tools/nx).
const unitOnly = process.env.SVC_TEST_UNIT_ONLY === "true"
const slowSuffixes = [".integration.test.ts", ".browser.test.ts"]
// Only packages with integration tests pay for a PostgreSQL server: one per test run (per package),
// with a migrated template database that each test file clones (see packages/store/test-support).
const hasIntegrationTests = !unitOnly && fs.existsSync(path.join(packageDir, "test")) &&
  fs.readdirSync(path.join(packageDir, "test"), { recursive: true })
    .some((f) => String(f).endsWith(".integration.test.ts"))

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    exclude: unitOnly
      ? ["**/node_modules/**", ...slowSuffixes.map((suffix) => `test/**/*${suffix}`)]
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
