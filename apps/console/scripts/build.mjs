// `npm run build -w @svc/console`: the console's static files in dist/ (docs/decisions/0800).
//
// - dist/index.html, dist/console.js (one minified ESM bundle of src/main.tsx: Preact, uPlot, TanStack Virtual and
//   the pages), dist/console.css (the pages' styles and uPlot's);
// - dist/console.inputs.json: the workspace files the bundle is made of (esbuild's metafile), which svc-server reads
//   to tell whether the bundle is older than its sources (apps/server/src/http/ConsoleAssets.ts);
// - dist/console.size.json: the bundle's bytes, raw and gzipped, for docs/benchmarks.md.
//
// No network: every input is in the repository or node_modules.
import * as esbuild from "esbuild"
import * as fs from "node:fs"
import * as path from "node:path"
import * as zlib from "node:zlib"

const root = path.resolve(import.meta.dirname, "..")
const dist = path.join(root, "dist")
const staging = fs.mkdtempSync(path.join(root, ".dist-"))
fs.chmodSync(staging, 0o755)

try {
  const result = await esbuild.build({
    entryPoints: { console: path.join(root, "src", "main.tsx") },
    bundle: true,
    format: "esm",
    platform: "browser",
    target: ["es2022", "chrome110", "firefox110", "safari16"],
    jsx: "automatic",
    jsxImportSource: "preact",
    minify: true,
    sourcemap: false,
    legalComments: "none",
    outdir: staging,
    metafile: true,
    logLevel: "warning",
    absWorkingDir: root
  })
  fs.copyFileSync(path.join(root, "src", "index.html"), path.join(staging, "index.html"))
  const inputs = [...Object.keys(result.metafile.inputs), "src/index.html"]
    .filter((input) => !input.includes("node_modules/"))
    .map((input) => path.relative(dist, path.resolve(root, input)))
  fs.writeFileSync(path.join(staging, "console.inputs.json"), JSON.stringify(inputs) + "\n")
  const size = (file) => {
    const bytes = fs.readFileSync(path.join(staging, file))
    return { bytes: bytes.length, gzip_bytes: zlib.gzipSync(bytes, { level: 9 }).length }
  }
  fs.writeFileSync(
    path.join(staging, "console.size.json"),
    JSON.stringify({ "console.js": size("console.js"), "console.css": size("console.css") }, null, 2) + "\n"
  )
  // swap in whole: a server reading dist/ never sees half a build. Two builds at once (two test processes asking
  // for /console) race here: the one that loses finds the other's complete dist/ and keeps it.
  const previous = `${staging}-previous`
  try {
    fs.renameSync(dist, previous)
  } catch {
    // none yet, or another build moved it first
  }
  try {
    fs.renameSync(staging, dist)
  } catch (error) {
    if (!fs.existsSync(path.join(dist, "console.inputs.json"))) throw error
    fs.rmSync(staging, { recursive: true, force: true })
  }
  fs.rmSync(previous, { recursive: true, force: true })
} catch (error) {
  fs.rmSync(staging, { recursive: true, force: true })
  throw error
}
