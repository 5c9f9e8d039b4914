/**
 * Canonical JSON of a request's values, and the check for strings PostgreSQL cannot store: what the request hash
 * of a create-batch-call covers (decision 0302), so that bodies a client means as equal hash alike.
 */

// The walkers below are iterative (decision 0106): they see what the HTTP edge accepted (nested at most maxJsonDepth
// levels), but a value nested thousands of levels deep must never exhaust the stack of a process that stores it.

/** A container being walked: its members in order (an object's keys; undefined for an array) and the next one. */
interface Walk {
  readonly container: object
  readonly keys: ReadonlyArray<string> | undefined
  index: number
  /** Members written so far (canonical: an object's members whose value is undefined are left out). */
  written: number
}

const walkOf = (container: object, sortKeys: boolean): Walk => {
  if (Array.isArray(container)) return { container, keys: undefined, index: 0, written: 0 }
  const keys = Object.keys(container)
  return { container, keys: sortKeys ? keys.sort() : keys, index: 0, written: 0 }
}

const sizeOf = (walk: Walk) =>
  walk.keys === undefined ? (walk.container as ReadonlyArray<unknown>).length : walk.keys.length

/**
 * Whether some member of the container `root` (walked depth first, keys in their own order) passes `found`, which
 * sees the container being walked, the member's place in it and its value.
 */
const someMember = (root: object, found: (walk: Walk, at: number, child: unknown) => boolean): boolean => {
  const stack: Array<Walk> = [walkOf(root, false)]
  while (stack.length > 0) {
    const walk = stack[stack.length - 1]!
    if (walk.index >= sizeOf(walk)) {
      stack.pop()
      continue
    }
    const at = walk.index++
    const child = walk.keys === undefined
      ? (walk.container as ReadonlyArray<unknown>)[at]
      : (walk.container as Record<string, unknown>)[walk.keys[at]!]
    if (found(walk, at, child)) return true
    if (typeof child === "object" && child !== null) stack.push(walkOf(child, false))
  }
  return false
}

/** Whether every object inside `value` lists its keys in sorted order, so `JSON.stringify` is canonical. */
export const isCanonicalOrder = (value: unknown): boolean =>
  typeof value !== "object" || value === null ||
  !someMember(value, (walk, at) => walk.keys !== undefined && at > 0 && !(walk.keys[at - 1]! < walk.keys[at]!))

/**
 * Canonical JSON (object keys sorted, no whitespace): equal text for values a client means as equal. The text is
 * what the recursive definition gives: `JSON.stringify` of each scalar (`null` for `undefined` in an array), members
 * whose value is `undefined` left out, keys in code-unit order.
 */
export const canonical = (value: unknown): string => {
  if (typeof value !== "object" || value === null) return JSON.stringify(value) ?? "null"
  let out = ""
  const stack: Array<Walk> = []
  /** Writes `item` (a member's value or an element): a scalar whole, a container's opening. */
  const open = (item: unknown) => {
    if (typeof item !== "object" || item === null) {
      out += JSON.stringify(item) ?? "null"
      return
    }
    const walk = walkOf(item, true)
    out += walk.keys === undefined ? "[" : "{"
    stack.push(walk)
  }
  open(value)
  while (stack.length > 0) {
    const walk = stack[stack.length - 1]!
    if (walk.keys === undefined) {
      const items = walk.container as ReadonlyArray<unknown>
      if (walk.index >= items.length) {
        out += "]"
        stack.pop()
        continue
      }
      if (walk.index > 0) out += ","
      open(items[walk.index++])
      continue
    }
    const record = walk.container as Record<string, unknown>
    // members whose value is undefined are left out
    while (walk.index < walk.keys.length && record[walk.keys[walk.index]!] === undefined) walk.index++
    if (walk.index >= walk.keys.length) {
      out += "}"
      stack.pop()
      continue
    }
    const key = walk.keys[walk.index]!
    out += (walk.written++ > 0 ? "," : "") + JSON.stringify(key) + ":"
    walk.index++
    open(record[key])
  }
  return out
}

/**
 * The canonical JSON of a JSON value. Clients nearly always send keys in one order per shape, and objects whose
 * keys are already sorted take the native `JSON.stringify` path (the slow path costs ~5x).
 */
export const canonicalJson = (value: unknown): string =>
  isCanonicalOrder(value) ? JSON.stringify(value) : canonical(value)

/**
 * Whether a string inside `value` contains U+0000 or an unpaired surrogate: `text` rejects the first, `jsonb`
 * both (as the escapes `\u0000` and `\udXXX`).
 */
export const hasUnstorable = (value: unknown): boolean => {
  const bad = (text: string) => text.includes("\u0000") || !text.isWellFormed()
  if (typeof value === "string") return bad(value)
  if (typeof value !== "object" || value === null) return false
  return someMember(
    value,
    (walk, at, child) => (walk.keys !== undefined && bad(walk.keys[at]!)) || (typeof child === "string" && bad(child))
  )
}
