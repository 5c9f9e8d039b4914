/**
 * A probe for a V8 defect in `JSON.parse` (decision 0013): Node 24.20.0 and 24.21.0 (V8
 * 13.6.233.17-node.53) read an object key of one character written as an escape (`"\u00e9"`,
 * `"\u0041"`, `"\n"`, `"\t"`, `"\""`, `"\/"`) as a backslash once any object in the process has had
 * the key `"\\"` at the same place. One client's metadata key `"\\"` would then rewrite another
 * org's custom field `"é"` sent by a client that escapes non-ASCII (Python's `json.dumps` does by
 * default): silent corruption of stored input. Node 24.22.3 and 22.x parse correctly.
 *
 * Every svc process runs the probe before it starts (Main.ts) and refuses to run on a Node that
 * fails it; the bootstrap (tools/bootstrap) installs the pinned Node instead of such a machine Node.
 * The probe creates the poisoning key itself, then parses escaped one-character keys in the shapes
 * that were misread (first key, and after another key): it needs nothing else to have been parsed
 * first. It runs at start-up, in a fresh process, which is where its tests check it.
 */

/** Escaped one-character keys and what they must read as. */
const KEYS: ReadonlyArray<readonly [string, string]> = [
  ["\\n", "\n"],
  ["\\t", "\t"],
  ["\\\"", "\""],
  ["\\/", "/"],
  ["\\u0041", "A"],
  ["\\u00e9", "é"],
  ["\\u2603", "☃"]
]

/**
 * The defect's description when `parse` (JSON.parse by default) misreads escaped one-character keys,
 * else undefined.
 */
export const jsonParseDefect = (parse: (text: string) => unknown = JSON.parse): string | undefined => {
  // The keys that poison the parser's key lookup, in the shapes probed below.
  parse("{\"\\\\\": 0}")
  parse("{\"svc_probe\": 0, \"\\\\\": 0}")
  for (const [escaped, expected] of KEYS) {
    for (const [text, index] of [[`{"${escaped}": 1}`, 0], [`{"svc_probe": 0, "${escaped}": 1}`, 1]] as const) {
      const value = parse(text)
      const keys = typeof value === "object" && value !== null ? Object.keys(value) : []
      if (keys[index] !== expected) {
        return `this Node (${process.version}, V8 ${process.versions.v8}) has a JSON.parse defect: it reads the ` +
          `key ${JSON.stringify(escaped)} of ${text} as ${JSON.stringify(keys[index])}, not ` +
          `${JSON.stringify(expected)}, which would corrupt stored input; use Node 24.22.3 or later ` +
          "(npm start installs it), or Node 22"
      }
    }
  }
  return undefined
}
