// `npm run build -w @svc/lint`: the two start-up forms of svc-lint, in dist/ (docs/decisions/0202).
//
// 1. dist/svc-lint.mjs: one ESM bundle of src/bin.ts (no module resolution or type stripping at
//    start-up). Runs on any Node >= 22.
// 2. dist/svc-lint.blob: a V8 start-up snapshot of src/snapshot.ts, with dist/svc-lint.blob.json
//    naming the Node version that built it (a snapshot runs only on that exact version). Built when
//    this Node can build snapshots; when it cannot, the build says why and the bin uses the bundle.
// 3. dist/svc-test.mjs: one ESM bundle of src/svcTest/main.ts, the `svc-test` bin's fast form (decision 0705: it
//    starts 4-5x faster than the sources; a snapshot was not built, see there).
import * as esbuild from "esbuild"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"

const root = path.resolve(import.meta.dirname, "..")
const dist = path.join(root, "dist")
fs.mkdirSync(dist, { recursive: true })

// The cache key's code identity (src/cache/CodeIdentity.ts): the hash of the sources this build is made of.
const { hashSources, sourceRoots } = await import("../src/cache/CodeIdentity.ts")

const common = {
  bundle: true,
  define: { SVC_LINT_SOURCE_HASH: JSON.stringify(hashSources(sourceRoots(path.join(root, "src")))) },
  platform: "node",
  target: "node22",
  minify: true,
  keepNames: true,
  logLevel: "warning"
}

await esbuild.build({
  ...common,
  entryPoints: [path.join(root, "src", "bin.ts")],
  format: "esm",
  outfile: path.join(dist, "svc-lint.mjs"),
  banner: { js: "import{createRequire as __svcRequire}from'node:module';const require=__svcRequire(import.meta.url);" }
})

const svcTest = await esbuild.build({
  ...common,
  entryPoints: [path.join(root, "src", "svcTest", "main.ts")],
  format: "esm",
  outfile: path.join(dist, "svc-test.mjs"),
  banner: { js: "import{createRequire as __svcRequire}from'node:module';const require=__svcRequire(import.meta.url);" },
  metafile: true
})
// The workspace files the bundle is made of (its npm packages change only with an install, which Nx's build inputs
// see): the bin runs the bundle only when it is newer than each of them, so an edit elsewhere in the tree does not
// send svc-test back to the sources (decision 0705).
fs.writeFileSync(
  path.join(dist, "svc-test.inputs.json"),
  JSON.stringify(
    Object.keys(svcTest.metafile.inputs).filter((input) => !input.includes("node_modules/"))
      .map((input) => path.relative(dist, path.resolve(input)))
  ) + "\n"
)

/**
 * effect/cli's CliOutput builds an `Intl.Segmenter` when its module loads; an ICU object cannot be
 * serialised into a snapshot, so the bundle builds it on first use instead. The build fails if the
 * source no longer has that line, rather than silently shipping a snapshot that cannot be built.
 */
const lazySegmenter = {
  name: "lazy-intl-segmenter",
  setup(build) {
    build.onLoad({ filter: /effect[\\/]dist[\\/]cli[\\/]CliOutput\.js$/ }, async (args) => {
      const source = await fs.promises.readFile(args.path, "utf8")
      const eager =
        /const graphemeSegmenter = \/\*#__PURE__\*\/new Intl\.Segmenter\(undefined, \{\s*granularity: "grapheme"\s*\}\);/
      if (!eager.test(source)) throw new Error(`${args.path} changed: update the lazy-intl-segmenter step`)
      const lazy = "let graphemeSegmenterInstance;" +
        "const graphemeSegmenter = { segment: (text) => (graphemeSegmenterInstance ??= " +
        "new Intl.Segmenter(undefined, { granularity: \"grapheme\" })).segment(text) };"
      return { contents: source.replace(eager, lazy), loader: "js" }
    })
  }
}

const snapshotEntry = path.join(dist, "svc-lint-snapshot.cjs")
const blob = path.join(dist, "svc-lint.blob")
const blobInfo = path.join(dist, "svc-lint.blob.json")
fs.rmSync(blob, { force: true })
fs.rmSync(blobInfo, { force: true })
await esbuild.build({
  ...common,
  entryPoints: [path.join(root, "src", "snapshot.ts")],
  format: "cjs",
  outfile: snapshotEntry,
  // Only CodeIdentity.ts reads it, in the branch the build's SVC_LINT_SOURCE_HASH leaves dead.
  define: { ...common.define, "import.meta.dirname": "\"\"" },
  plugins: [lazySegmenter]
})
const built = spawnSync(process.execPath, ["--snapshot-blob", blob, "--build-snapshot", snapshotEntry], {
  cwd: dist,
  encoding: "utf8"
})
fs.rmSync(snapshotEntry, { force: true })
if (built.status === 0 && fs.existsSync(blob)) {
  fs.writeFileSync(blobInfo, JSON.stringify({ node: process.version }) + "\n")
} else {
  fs.rmSync(blob, { force: true })
  const why = `${built.stderr ?? ""}${built.error?.message ?? ""}`.trim().split("\n").slice(0, 3).join(" | ")
  process.stderr.write(
    `svc-lint build: no start-up snapshot on Node ${process.version} (${why}); the bin uses the bundle\n`
  )
}
