// Vitest settings shared by every workspace package (each package's vitest.config.ts merges them).
import * as fs from "node:fs"
import * as path from "node:path"
import { defineConfig } from "vitest/config"

const packageDir = process.cwd()
// Only packages with integration tests pay for a PostgreSQL server: one per test run (per package),
// with a migrated template database that each test file clones (see packages/store/test-support).
const hasIntegrationTests = fs.existsSync(path.join(packageDir, "test")) &&
  fs.readdirSync(path.join(packageDir, "test"), { recursive: true })
    .some((f) => String(f).endsWith(".integration.test.ts"))

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
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
