/**
 * Canonical JSON: the same text for every value that `JSON.stringify` would serialize to equal
 * JSON, whatever the order in which object keys were written.
 *
 * Object keys are sorted by UTF-16 code units, there is no whitespace, and the value rules are those
 * of `JSON.stringify` (members that are `undefined`, functions or symbols are left out of objects and
 * become `null` in arrays; non-finite numbers are `null`; `-0` is `0`; `toJSON` is honoured). Two
 * additions make it total: a `bigint` is written as its decimal digits, and a value that contains
 * itself is written as `null` where it recurs, instead of throwing.
 *
 * @internal
 */

const render = (value: unknown, key: string, ancestors: Array<object>): string | undefined => {
  if (value !== null && typeof value === "object" && "toJSON" in value && typeof value.toJSON === "function") {
    return render((value.toJSON as (key: string) => unknown)(key), key, ancestors)
  }
  switch (typeof value) {
    case "string":
      return JSON.stringify(value)
    case "number":
      return Number.isFinite(value) ? JSON.stringify(value) : "null"
    case "boolean":
      return value ? "true" : "false"
    case "bigint":
      return value.toString()
    case "object": {
      if (value === null || ancestors.includes(value)) return "null"
      ancestors.push(value)
      let out: string
      if (Array.isArray(value)) {
        const items: Array<string> = []
        for (let i = 0; i < value.length; i++) items.push(render(value[i], String(i), ancestors) ?? "null")
        out = "[" + items.join(",") + "]"
      } else {
        const members: Array<string> = []
        const record = value as Record<string, unknown>
        for (const name of Object.keys(record).sort()) {
          const rendered = render(record[name], name, ancestors)
          if (rendered !== undefined) members.push(JSON.stringify(name) + ":" + rendered)
        }
        out = "{" + members.join(",") + "}"
      }
      ancestors.pop()
      return out
    }
    default:
      return undefined
  }
}

/**
 * The canonical JSON text of `value`; `undefined` for a value `JSON.stringify` would also drop
 * (`undefined`, a function, a symbol).
 *
 * @category encoding
 */
export const canonicalJson = (value: unknown): string | undefined => render(value, "", [])
