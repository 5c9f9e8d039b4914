// The Nx test cache key covers every environment variable the product and its tests read (issue 17, "Honest
// benchmark method": a cached test result replayed under other settings is a result nobody ran). The names are
// found in the sources the tests run: `Config.*("NAME")`-style literals and `process.env` reads.
import { assert, describe, it } from "@effect/vitest"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as path from "node:path"

const root = path.resolve(import.meta.dirname, "../..")
const { covered } = createRequire(import.meta.url)("../nx/testEnvironment.cjs") as {
  covered: (name: string) => boolean
}

/** Names that look like environment variables but are not read from the environment, or not by tests. */
const NOT_READ_BY_TESTS: Record<string, string> = {
  PG_VERSION: "a file of a PostgreSQL data directory",
  GITHUB_STEP_SUMMARY: "where the CI summary reporter writes; it changes no result",
  X_1: "a contact's external_id in a store test",
  EREFUSED_ADDRESS: "the error code the batch-test runner's address check gives a refused WebSocket address"
}

/** Node's error codes (`HPE_INVALID_METHOD` of its HTTP parser, `ERR_HTTP_REQUEST_TIMEOUT`), matched by the server. */
const NODE_ERROR_CODE = /^(HPE|ERR)_/

const sourceFiles = (dir: string): Array<string> =>
  fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name)
    if (entry.isDirectory()) return ["node_modules", "bench", "dist"].includes(entry.name) ? [] : sourceFiles(full)
    return /\.(ts|cjs|js|mjs)$/.test(entry.name) ? [full] : []
  })

describe("the Nx test cache key", () => {
  it("covers every environment variable named in the product's and the tests' sources", () => {
    const files = [
      ...["apps", "packages"].flatMap((d) => sourceFiles(path.join(root, d))),
      ...["start", "bootstrap", "test"].flatMap((d) => sourceFiles(path.join(root, "tools", d))),
      path.join(root, "vitest.shared.ts")
    ]
    const names = new Set<string>()
    for (const file of files) {
      const text = fs.readFileSync(file, "utf8")
      for (const m of text.matchAll(/"([A-Z][A-Z0-9]*_[A-Z0-9_]*[A-Z0-9])"/g)) names.add(m[1]!)
      for (const m of text.matchAll(/process\.env(?:\.([A-Za-z_][A-Za-z0-9_]*)|\["([A-Za-z_][A-Za-z0-9_]*)"\])/g)) {
        names.add((m[1] ?? m[2])!)
      }
      for (const m of text.matchAll(/Config\.\w+\("([A-Z][A-Z0-9_]*)"/g)) names.add(m[1]!)
    }
    assert.isAbove(names.size, 30, "the scan finds the product's settings")
    const missing = [...names].filter((n) =>
      !covered(n) && !(n in NOT_READ_BY_TESTS) && !NODE_ERROR_CODE.test(n) && n !== "PATH"
    ).sort()
    assert.deepStrictEqual(missing, [], "add them to tools/nx/testEnvironment.cjs")
  })

  it("is wired into nx.json's test target", () => {
    const nx = JSON.parse(fs.readFileSync(path.join(root, "nx.json"), "utf8"))
    assert.deepInclude(nx.targetDefaults.test.inputs, { runtime: "node tools/nx/testEnvironment.cjs" })
  })
})
