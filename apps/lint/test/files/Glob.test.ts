import { assert, describe, it } from "@effect/vitest"
import * as GitIgnore from "../../src/files/GitIgnore.ts"
import { compile, compileAll, isGlob, splitGlob } from "../../src/files/Glob.ts"

describe("Glob", () => {
  it("tells globs from plain paths", () => {
    assert.isTrue(isGlob("agents/*.json"))
    assert.isTrue(isGlob("**/x"))
    assert.isTrue(isGlob("a/{b,c}"))
    assert.isFalse(isGlob("agents/main.json"))
  })

  it("matches a pattern without a slash at any depth, and everything below a matching folder", () => {
    const generated = compile("*.generated.yaml")
    assert.isTrue(generated.test("a.generated.yaml"))
    assert.isTrue(generated.test("deep/er/a.generated.yaml"))
    assert.isFalse(generated.test("a.yaml"))
    const fixtures = compile("fixtures")
    assert.isTrue(fixtures.test("test/fixtures/x/y.json"))
    assert.isFalse(fixtures.test("test/fixtures2/y.json"))
  })

  it("anchors a pattern with a slash and supports **, ?, classes and alternatives", () => {
    const m = compileAll(["legacy/**/*.{json,yaml}", "tmp/?.json", "v[0-9]/*.json"])
    assert.isTrue(m("legacy/a.json"))
    assert.isTrue(m("legacy/x/y/a.yaml"))
    assert.isFalse(m("src/legacy/a.json"))
    assert.isTrue(m("tmp/a.json"))
    assert.isFalse(m("tmp/ab.json"))
    assert.isTrue(m("v2/a.json"))
    assert.isFalse(m("vx/a.json"))
    assert.isTrue(compile("./agents/").test("agents/a.json"))
  })

  it("splits an input glob into the folder to walk and a full-path matcher", () => {
    const { base, regex } = splitGlob("corpus/team-0*/agents/*.json")
    assert.strictEqual(base, "corpus")
    assert.isTrue(regex.test("corpus/team-01/agents/a.json"))
    assert.isFalse(regex.test("corpus/team-01/llms/a.json"))
    assert.strictEqual(splitGlob("**/*.yaml").base, ".")
  })
})

describe("GitIgnore", () => {
  const stack = [
    GitIgnore.parse("/repo", "# comment\nnode_modules/\n*.log\n/build\n!keep.log\ndocs/*.json\n"),
    GitIgnore.parse("/repo/sub", "local.yaml\n")
  ]
  const ignored = (p: string, dir = false) => GitIgnore.isIgnored(stack, p, dir)

  it("ignores by name at any depth, anchored paths and folders only", () => {
    assert.isTrue(ignored("/repo/a/b/x.log"))
    assert.isFalse(ignored("/repo/keep.log"))
    assert.isTrue(ignored("/repo/build", true))
    assert.isFalse(ignored("/repo/src/build", true))
    assert.isTrue(ignored("/repo/node_modules", true))
    assert.isFalse(ignored("/repo/node_modules", false))
    assert.isTrue(ignored("/repo/docs/a.json"))
    assert.isFalse(ignored("/repo/docs/deep/a.json"))
  })

  it("applies a nested file only below its folder", () => {
    assert.isTrue(ignored("/repo/sub/local.yaml"))
    assert.isTrue(ignored("/repo/sub/x/local.yaml"))
    assert.isFalse(ignored("/repo/local.yaml"))
  })
})
