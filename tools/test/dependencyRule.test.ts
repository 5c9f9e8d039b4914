// The dependency rule is a check that fails, not a convention: the verdicts of the rule, the
// repository-wide check that `npm test` runs, and the ESLint rule on a file that breaks it.
import { assert, describe, it } from "@effect/vitest"
import { ESLint } from "eslint"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { check, importKindsOf, importsOf } from "../dependency-rule/check.ts"
import { functionBodyViolations, mainViolations, typeOnlyPending, violation } from "../dependency-rule/rule.js"

const root = path.resolve(import.meta.dirname, "..", "..")

describe("dependency rule", () => {
  it("lets the pure domain import effect's pure modules only", () => {
    assert.isUndefined(violation("packages/domain/src/CallWindow.ts", "effect"))
    assert.isUndefined(violation("packages/domain/src/CallWindow.ts", "effect/Schema"))
    assert.match(violation("packages/domain/src/CallWindow.ts", "effect/sql") ?? "", /must not import effect\/sql/)
    assert.match(violation("packages/domain/src/CallWindow.ts", "effect/http-api") ?? "", /must not import/)
    assert.match(violation("packages/domain/src/CallWindow.ts", "node:fs") ?? "", /imports only "effect"/)
    assert.match(violation("packages/domain/src/CallWindow.ts", "@svc/store") ?? "", /imports only "effect"/)
    assert.match(
      violation("packages/domain/src/CallWindow.ts", "../../store/src/Database.ts") ?? "",
      /leaves its package/
    )
  })

  it("lets tests use the test tooling but nothing else the package may not", () => {
    assert.isUndefined(violation("packages/domain/test/CallWindow.test.ts", "@effect/vitest"))
    assert.match(violation("packages/domain/test/CallWindow.test.ts", "node:fs") ?? "", /imports only "effect"/)
  })

  it("lets api and store import the domain, never each other", () => {
    assert.isUndefined(violation("packages/api/src/Api.ts", "@svc/domain"))
    assert.match(violation("packages/api/src/Api.ts", "@svc/store") ?? "", /imports only/)
    assert.isUndefined(violation("packages/store/src/Database.ts", "@svc/domain"))
    assert.match(violation("packages/store/src/Database.ts", "@svc/api") ?? "", /only "@svc\/domain"/)
  })

  it("lets apps import packages but never another app", () => {
    assert.isUndefined(violation("apps/server/src/main.ts", "@svc/store"))
    assert.isUndefined(violation("apps/server/src/main.ts", "@svc/server/Server.ts"))
    assert.match(violation("apps/server/src/main.ts", "@svc/scheduler") ?? "", /apps never import each other/)
    assert.match(violation("apps/lint/src/bin.ts", "@svc/server") ?? "", /apps never import each other/)
  })

  it("finds static, re-export, side-effect and dynamic imports with their lines", () => {
    const source = [
      "import { Effect } from \"effect\"",
      "import type { X } from \"./X.ts\"",
      "export * from \"node:fs\"",
      "import \"node:os\"",
      "const m = await import(\"node:path\")",
      "// the word import in a comment is not an import"
    ].join("\n")
    assert.deepStrictEqual(importsOf(source), [
      { spec: "effect", line: 1 },
      { spec: "./X.ts", line: 2 },
      { spec: "node:fs", line: 3 },
      { spec: "node:os", line: 4 },
      { spec: "node:path", line: 5 }
    ])
  })

  it("holds for this repository", () => {
    assert.deepStrictEqual(check(root), [])
  })

  it("reports a domain file importing node:fs and a package.json that declares a forbidden dependency", () => {
    const tree = fs.mkdtempSync(path.join(os.tmpdir(), "svc-deps-"))
    try {
      fs.mkdirSync(path.join(tree, "packages/domain/src"), { recursive: true })
      fs.writeFileSync(
        path.join(tree, "packages/domain/package.json"),
        JSON.stringify({ dependencies: { effect: "4.1.0", pg: "8" } })
      )
      fs.writeFileSync(
        path.join(tree, "packages/domain/src/Bad.ts"),
        "import { Effect } from \"effect\"\nimport * as fs from \"node:fs\"\n"
      )
      assert.deepStrictEqual(check(tree), [
        "packages/domain/package.json: dependency the pure domain imports only \"effect\" (found \"pg\")",
        "packages/domain/src/Bad.ts:2: the pure domain imports only \"effect\" (found \"node:fs\")"
      ])
    } finally {
      fs.rmSync(tree, { recursive: true, force: true })
    }
  })

  // Rule 4 (docs/architecture.md "SQL functions"; issue 29 item 2): migrations 0001-0027 are frozen with the bodies
  // they shipped; from 0028 on a migration creates tables, indexes and triggers, never a function body.
  describe("rule 4: no SQL function body in a migration after 0027", () => {
    const plpgsql = [
      "yield* sql`",
      "  CREATE OR REPLACE FUNCTION touch() RETURNS trigger LANGUAGE plpgsql AS $$",
      "  BEGIN RETURN NEW; END $$`",
      "yield* sql`CREATE FUNCTION answer() RETURNS int AS $$ SELECT 42 $$ LANGUAGE sql`",
      "yield* sql`CREATE TRIGGER t AFTER INSERT ON x FOR EACH ROW EXECUTE FUNCTION touch()`"
    ].join("\n")

    it("finds CREATE [OR REPLACE] FUNCTION and LANGUAGE plpgsql in 0028 and later, with their lines", () => {
      const found = functionBodyViolations("packages/store/src/migrations/0028_x.ts", plpgsql)
      assert.deepStrictEqual(found.map((f) => f.line), [2, 2, 4])
      assert.match(found[0]?.message ?? "", /in a migration after 0027: .*packages\/store\/src\/functions\//)
      assert.lengthOf(functionBodyViolations("packages/store/src/migrations/0103_later.ts", plpgsql), 3)
    })

    it("leaves the frozen migrations, the functions folder and triggers alone", () => {
      assert.deepStrictEqual(
        functionBodyViolations("packages/store/src/migrations/0027_contact_search.ts", plpgsql),
        []
      )
      assert.deepStrictEqual(functionBodyViolations("packages/store/src/migrations/0001_extensions.ts", plpgsql), [])
      assert.deepStrictEqual(functionBodyViolations("packages/store/src/functions/touch.sql", plpgsql), [])
      assert.deepStrictEqual(
        functionBodyViolations(
          "packages/store/src/migrations/0029_trigger.ts",
          "yield* sql`CREATE TRIGGER t AFTER INSERT ON x FOR EACH ROW EXECUTE FUNCTION touch()`"
        ),
        []
      )
    })

    it("fails the repository-wide check when a migration after 0027 defines a function", () => {
      const tree = fs.mkdtempSync(path.join(os.tmpdir(), "svc-deps-"))
      try {
        const migrations = path.join(tree, "packages/store/src/migrations")
        fs.mkdirSync(migrations, { recursive: true })
        fs.writeFileSync(path.join(tree, "packages/store/package.json"), JSON.stringify({ dependencies: {} }))
        fs.writeFileSync(path.join(migrations, "0027_frozen.ts"), plpgsql)
        fs.writeFileSync(path.join(migrations, "0029_bad.ts"), plpgsql)
        const problems = check(tree)
        assert.deepStrictEqual(problems.map((p) => p.split(": ")[0]), [
          "packages/store/src/migrations/0029_bad.ts:2",
          "packages/store/src/migrations/0029_bad.ts:2",
          "packages/store/src/migrations/0029_bad.ts:4"
        ])
      } finally {
        fs.rmSync(tree, { recursive: true, force: true })
      }
    })
  })

  // Rule 5 (docs/architecture.md "Folders"; issue 29 item 3): a feature folder of packages/store/src uses another
  // feature through that feature's index.ts only; db/ and migrations/ are shared plumbing.
  describe("rule 5: the store's features meet through index.ts", () => {
    const from = "packages/store/src/dispatch/Claims.ts"

    it("refuses a file of one feature importing a file inside another, naming both and the index to use", () => {
      assert.strictEqual(
        violation(from, "../policies/CallingPolicyRepo.ts"),
        "dispatch/ reaches into policies/ (\"../policies/CallingPolicyRepo.ts\"); import what it needs from " +
          "\"../policies/index.ts\" (rule 5)"
      )
      // deeper on either side: a carrier's file reaching into another feature, a file below another feature
      assert.match(
        violation("packages/store/src/carriers/twilio/TwilioRepo.ts", "../../calls/CallsRepo.ts") ?? "",
        /carriers\/ reaches into calls\//
      )
      assert.match(violation(from, "../carriers/twilio/TwilioRepo.ts") ?? "", /dispatch\/ reaches into carriers\//)
      // an index below the feature's top is not the feature's index
      assert.match(violation(from, "../carriers/twilio/index.ts") ?? "", /reaches into carriers\//)
    })

    it("lets a feature use another's index.ts, its own files, db/ and migrations/", () => {
      assert.isUndefined(violation(from, "../policies/index.ts"))
      assert.isUndefined(violation(from, "./OrgLock.ts"))
      assert.isUndefined(violation(from, "../db/CursorKeys.ts"))
      assert.isUndefined(violation(from, "../migrations/0027_contact_search.ts"))
      assert.isUndefined(violation("packages/store/src/carriers/twilio/TwilioRepo.ts", "../simulated/SimulatedRepo.ts"))
      // the package's own index at the top of src, and tests, are not features
      assert.isUndefined(violation("packages/store/src/index.ts", "./dispatch/Claims.ts"))
      assert.isUndefined(
        violation("packages/store/test/dispatch/Claims.test.ts", "../../src/policies/CallingPolicyRepo.ts")
      )
      // the rule is the store's: another package's folders are not its features
      assert.isUndefined(violation("apps/scheduler/src/dispatch/Claimer.ts", "../runtime/Retrying.ts"))
    })

    it("fails the repository-wide check and ESLint on such an import", async () => {
      const tree = fs.mkdtempSync(path.join(os.tmpdir(), "svc-deps-"))
      try {
        fs.mkdirSync(path.join(tree, "packages/store/src/calls"), { recursive: true })
        fs.writeFileSync(path.join(tree, "packages/store/package.json"), JSON.stringify({ dependencies: {} }))
        fs.writeFileSync(
          path.join(tree, "packages/store/src/calls/CallsRepo.ts"),
          "import { ok } from \"../contacts/index.ts\"\nimport { bad } from \"../contacts/ContactsQuery.ts\"\n"
        )
        assert.deepStrictEqual(check(tree).map((p) => p.split(": ")[0]), ["packages/store/src/calls/CallsRepo.ts:2"])
      } finally {
        fs.rmSync(tree, { recursive: true, force: true })
      }
      const eslint = new ESLint({ cwd: root })
      const [result] = await eslint.lintText(
        "import { searchTextExpression } from \"../contacts/ContactsQuery.ts\"\nexport const x = searchTextExpression\n",
        {
          filePath: path.join(root, "packages/store/src/calls/Bad.ts")
        }
      )
      assert.deepStrictEqual(result?.messages.map((m) => [m.ruleId, m.line]), [["svc/dependency-rule", 1]])
    }, 30_000)
  })

  // Rule 3 (docs/architecture.md "Packages and the dependency rule"; layout rule 3, issue 29 item 1): the store takes
  // decided values; the domain's compliance/ and dispatch/ modules decide, run by the store's callers.
  describe("rule 3: the store imports compliance/ and dispatch/ for types only", () => {
    const store = "packages/store/src/batches/CreateBatchCall.ts"

    it("refuses a value import, an inline `type` import and a re-export, naming the module", () => {
      assert.strictEqual(
        violation(store, "@svc/domain/compliance/LegalGroups.ts"),
        "packages/store/src imports @svc/domain/compliance/ for types only (\"@svc/domain/compliance/LegalGroups.ts\"): " +
          "callers decide, the store applies what they decided; import type, and take the decided value as a " +
          "parameter (rule 3)"
      )
      assert.match(
        violation("packages/store/src/dispatch/Claims.ts", "@svc/domain/dispatch/Legality.ts", false) ?? "",
        /imports @svc\/domain\/dispatch\/ for types only/
      )
      // the inline form still loads the module under verbatimModuleSyntax (`import {} from ...`)
      assert.deepStrictEqual(
        importKindsOf(
          [
            "import { type LegalGroup } from \"@svc/domain/compliance/LegalGroups.ts\"",
            "import { LegalGrouper, type LegalGroup } from \"@svc/domain/compliance/LegalGroups.ts\"",
            "export * from \"@svc/domain/dispatch/Outcome.ts\"",
            "const m = await import(\"@svc/domain/dispatch/Lease.ts\")"
          ].join("\n")
        ).map((i) => i.typeOnly),
        [false, false, false, false]
      )
    })

    it("lets the store import their types, and everything else of the domain; tests and apps are callers", () => {
      assert.isUndefined(violation(store, "@svc/domain/compliance/LegalGroups.ts", true))
      assert.deepStrictEqual(
        importKindsOf(
          [
            "import type { LegalGroup } from \"@svc/domain/compliance/LegalGroups.ts\"",
            "import type * as Legality from \"@svc/domain/dispatch/Legality.ts\"",
            "import type Zones from \"@svc/domain/compliance/RecipientZones.ts\"",
            "export type { Outcome } from \"@svc/domain/dispatch/Outcome.ts\"",
            "export type * from \"@svc/domain/dispatch/Lease.ts\"",
            "import type from \"./type.ts\""
          ].join("\n")
        ).map((i) => [i.line, i.typeOnly]),
        [[1, true], [2, true], [3, true], [4, true], [5, true], [6, false]]
      )
      assert.isUndefined(violation(store, "@svc/domain/models/BatchCall.ts"))
      assert.isUndefined(violation(store, "@svc/domain/CallWindow.ts"))
      assert.isUndefined(violation("packages/store/test/batches/TaskPreparer.test.ts", "@svc/domain/compliance/X.ts"))
      assert.isUndefined(violation("apps/server/src/handlers/BatchCalls.ts", "@svc/domain/compliance/LegalGroups.ts"))
      assert.isUndefined(violation("packages/api/src/Api.ts", "@svc/domain/dispatch/Outcome.ts"))
    })

    it("lets only the listed pending imports through, and fails the check when one is no longer made", () => {
      // The list only shrinks and may be empty, so the test lists imports of its own, taken out again after it: a file
      // with two pending imports, of which it then makes one by type only. The rule and the check read the one list
      // (readonly to its users, not to this test).
      const list = typeOnlyPending as Array<(typeof typeOnlyPending)[number]>
      const pending = {
        file: "packages/store/src/batches/PendingMove.ts",
        spec: "@svc/domain/compliance/LegalGroups.ts",
        moves: "nothing: the test's own"
      }
      const other = { ...pending, spec: "@svc/domain/compliance/LegalHours.ts" }
      list.push(pending, other)
      const tree = fs.mkdtempSync(path.join(os.tmpdir(), "svc-deps-"))
      try {
        assert.isUndefined(violation(pending.file, pending.spec))
        // the same import elsewhere, or another module in the same file, is refused
        assert.match(violation("packages/store/src/batches/Other.ts", pending.spec) ?? "", /rule 3/)
        assert.match(violation(pending.file, "@svc/domain/dispatch/Legality.ts") ?? "", /rule 3/)
        fs.mkdirSync(path.join(tree, path.dirname(pending.file)), { recursive: true })
        fs.writeFileSync(path.join(tree, "packages/store/package.json"), JSON.stringify({ dependencies: {} }))
        // the file's other pending import is still made by value: only the one made by type is reported
        fs.writeFileSync(
          path.join(tree, pending.file),
          `import type { X } from "${pending.spec}"\nimport { Y } from "${other.spec}"\n`
        )
        assert.deepStrictEqual(check(tree), [
          `${pending.file}: no longer imports "${pending.spec}" by value; remove it from typeOnlyPending in ` +
          "tools/dependency-rule/rule.js (rule 3)"
        ])
      } finally {
        list.splice(list.indexOf(pending), 2)
        fs.rmSync(tree, { recursive: true, force: true })
      }
      assert.match(violation(pending.file, pending.spec) ?? "", /rule 3/)
    })

    it("fails the repository-wide check and ESLint on a value import, not on import type", async () => {
      const tree = fs.mkdtempSync(path.join(os.tmpdir(), "svc-deps-"))
      try {
        fs.mkdirSync(path.join(tree, "packages/store/src/batches"), { recursive: true })
        fs.writeFileSync(path.join(tree, "packages/store/package.json"), JSON.stringify({ dependencies: {} }))
        fs.writeFileSync(
          path.join(tree, "packages/store/src/batches/Bad.ts"),
          "import type { LegalGroup } from \"@svc/domain/compliance/LegalGroups.ts\"\n" +
            "import { LegalGrouper } from \"@svc/domain/compliance/LegalGroups.ts\"\n"
        )
        assert.deepStrictEqual(check(tree).map((p) => p.split(": ")[0]), ["packages/store/src/batches/Bad.ts:2"])
      } finally {
        fs.rmSync(tree, { recursive: true, force: true })
      }
      const eslint = new ESLint({ cwd: root })
      const [result] = await eslint.lintText(
        [
          "import type { LegalGroup } from \"@svc/domain/compliance/LegalGroups.ts\"",
          "import { groupLegality } from \"@svc/domain/dispatch/Legality.ts\"",
          "export type { Outcome } from \"@svc/domain/dispatch/Outcome.ts\"",
          "export const x: LegalGroup | undefined = undefined",
          "export const y = groupLegality",
          ""
        ].join("\n"),
        { filePath: path.join(root, "packages/store/src/batches/Bad.ts") }
      )
      assert.deepStrictEqual(result?.messages.map((m) => [m.ruleId, m.line]), [["svc/dependency-rule", 2]])
    }, 30_000)
  })

  // Rule 6 (docs/architecture.md "Folders"; layout rule 5, house style §5.3): an app's main.ts only composes layers.
  describe("rule 6: an app's main.ts only composes layers", () => {
    const server = "apps/server/src/main.ts"

    it("lets main.ts import effect, @svc/runtime, the store's root and its own app's modules only", () => {
      assert.isUndefined(violation(server, "effect"))
      assert.isUndefined(violation(server, "@svc/runtime"))
      assert.isUndefined(violation(server, "./runtime/Server.ts"))
      assert.isUndefined(violation(server, "@svc/server/runtime/Server.ts"))
      assert.match(
        violation(server, "node:fs") ?? "",
        /main\.ts only composes layers: .*\(found "node:fs"\).*\(rule 6\)/
      )
      assert.match(violation(server, "effect/http") ?? "", /\(found "effect\/http"\)/)
      assert.match(violation(server, "@svc/store/dispatch/DispatchRepo.ts") ?? "", /rule 6/)
      assert.match(violation("apps/lint/src/main.ts", "@effect/platform-node/NodeRuntime") ?? "", /rule 6/)
      // other files of the app, and a main.ts below src/, are not the app's main
      assert.isUndefined(violation("apps/server/src/runtime/Server.ts", "node:fs"))
      assert.isUndefined(violation("apps/server/src/admin/main.ts", "node:fs"))
    })

    it("finds functions, classes, control flow and process in main.ts, with their lines, outside comments and strings", () => {
      const source = [
        "// if a function, a class or process is named in a comment, that is not code",
        "import { Main } from \"@svc/runtime\"",
        "function helper() { return 1 }",
        "class Box {}",
        "const port = process.env[\"PORT\"] ?? \"8080 if while\"",
        "if (port) Main.launch(\"x\", layer)",
        "const f = (a: number) => a + 1",
        "export const main = (p: P): void => run(p)",
        "export const main = (q: Q): void => run(q)"
      ].join("\n")
      assert.deepStrictEqual(mainViolations(server, source).map((v) => [v.line, v.message.split(": ")[1]]), [
        [3, "a function definition (rule 6)"],
        [4, "a class (rule 6)"],
        [5, "control flow (rule 6)"],
        [5, "process (arguments, environment and exit codes belong to the runtime) (rule 6)"],
        [6, "control flow (rule 6)"],
        [7, "a function other than the launch (export const main = (...) => ...) (rule 6)"],
        [9, "a function other than the launch (export const main = (...) => ...) (rule 6)"],
        [9, "a second launch (rule 6)"]
      ])
    })

    it("lets a main.ts that composes and launches pass, and leaves other files alone", () => {
      const composes = [
        "import { Logging, Main } from \"@svc/runtime\"",
        "import { Database } from \"@svc/store\"",
        "import { Layer } from \"effect\"",
        "import * as Server from \"./runtime/Server.ts\"",
        "Main.launch(\"svc-server\", Server.layer.pipe(Layer.provideMerge(Database.layerSupervised)), Database.supervisionFailed)"
      ].join("\n")
      assert.deepStrictEqual(mainViolations(server, composes), [])
      // the launch of an entry that receives its runtime (svc-lint: bin.ts and the start-up snapshot hand it in)
      assert.deepStrictEqual(
        mainViolations("apps/lint/src/main.ts", "export const main = (platform: Platform): void => run(platform)\n"),
        []
      )
      assert.deepStrictEqual(mainViolations("apps/server/src/runtime/Server.ts", "function f() { if (x) {} }"), [])
    })

    it("fails the repository-wide check and ESLint on a main.ts that does more than compose", async () => {
      const tree = fs.mkdtempSync(path.join(os.tmpdir(), "svc-deps-"))
      try {
        fs.mkdirSync(path.join(tree, "apps/server/src"), { recursive: true })
        fs.writeFileSync(path.join(tree, "apps/server/package.json"), JSON.stringify({ dependencies: {} }))
        fs.writeFileSync(
          path.join(tree, "apps/server/src/main.ts"),
          "import { Main } from \"@svc/runtime\"\nimport * as fs from \"node:fs\"\n" +
            "if (fs.existsSync(\"x\")) Main.launch(\"svc-server\", layer)\n"
        )
        assert.deepStrictEqual(check(tree).map((p) => p.split(": ")[0]), [
          "apps/server/src/main.ts:2",
          "apps/server/src/main.ts:3"
        ])
      } finally {
        fs.rmSync(tree, { recursive: true, force: true })
      }
      const eslint = new ESLint({ cwd: root })
      const [result] = await eslint.lintText(
        "import * as fs from \"node:fs\"\nexport const exists = fs.existsSync\n",
        { filePath: path.join(root, "apps/server/src/main.ts") }
      )
      assert.deepStrictEqual(result?.messages.map((m) => [m.ruleId, m.line]), [["svc/dependency-rule", 1]])
    }, 30_000)
  })

  it("fails ESLint (and so npm test) when the domain imports effect/sql", async () => {
    const eslint = new ESLint({ cwd: root })
    const [result] = await eslint.lintText("import { SqlClient } from \"effect/sql\"\nexport const x = SqlClient\n", {
      filePath: path.join(root, "packages/domain/src/Bad.ts")
    })
    assert.deepStrictEqual(result?.messages.map((m) => [m.ruleId, m.line, m.message]), [
      ["svc/dependency-rule", 1, "the pure domain must not import effect/sql (I/O belongs to store, api and apps)"]
    ])
  }, 30_000)
})
