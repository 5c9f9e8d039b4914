/**
 * Proposed edits to a JSON document and a pure function that applies them.
 *
 * A fix is a short list of operations on JSON paths, in the spirit of JSON Patch (RFC 6902) but
 * with paths as arrays (no escaping) and three operations: `set` (add or replace), `remove` and
 * `rename` (a key within its object). Every operation is idempotent, so applying a fix twice, or
 * applying two findings' shared fix once each, gives the same document as applying it once:
 * `set` writes the same value again, `remove` and `rename` do nothing when the source is gone.
 * `applyFixes` never mutates its input: containers on the edited paths are copied.
 *
 * @category models
 */
import { Predicate } from "effect"

/**
 * A JSON path: object keys and array indexes from the document root.
 *
 * @category models
 */
export type JsonPath = ReadonlyArray<string | number>

/**
 * One edit on a JSON document.
 *
 * - `set`: put `value` at `path`; the parent must exist (an array index may be the array's length,
 *   which appends).
 * - `remove`: delete the key (or array element) at `path`; nothing when absent.
 * - `rename`: move the value at `path` to the key `to` of the same object; nothing when the source
 *   is absent or the target already exists.
 *
 * @category models
 */
export type FixOperation =
  | { readonly op: "set"; readonly path: JsonPath; readonly value: unknown }
  | { readonly op: "remove"; readonly path: JsonPath }
  | { readonly op: "rename"; readonly path: JsonPath; readonly to: string }

/**
 * A proposed edit for one or more findings.
 *
 * `safe` is `true` when the edit keeps the document's meaning (a mechanical migration the linter
 * may apply with `--fix`); `false` for a suggestion that needs a person's review (e.g. the locale
 * list that replaces the scalar language `multi`, whose exact ten locales the spec does not name).
 *
 * @category models
 */
export interface Fix {
  readonly description: string
  readonly safe: boolean
  readonly operations: ReadonlyArray<FixOperation>
}

/**
 * `set` operation.
 *
 * @category constructors
 */
export const set = (path: JsonPath, value: unknown): FixOperation => ({ op: "set", path, value })

/**
 * `remove` operation.
 *
 * @category constructors
 */
export const remove = (path: JsonPath): FixOperation => ({ op: "remove", path })

/**
 * `rename` operation.
 *
 * @category constructors
 */
export const rename = (path: JsonPath, to: string): FixOperation => ({ op: "rename", path, to })

type Edit = (container: unknown, key: string | number) => unknown

const NOTHING: unique symbol = Symbol("NOTHING")

/**
 * Copies the containers along `path` and applies `edit` to the parent of the last step. Returns
 * `NOTHING` when the path does not lead to an existing container or the edit changes nothing, so
 * unchanged subtrees keep their identity.
 */
const editAt = (node: unknown, path: JsonPath, index: number, edit: Edit): unknown => {
  const key = path[index]
  if (key === undefined) return NOTHING
  if (index === path.length - 1) return edit(node, key)
  if (Array.isArray(node)) {
    if (typeof key !== "number" || !Number.isInteger(key) || key < 0 || key >= node.length) return NOTHING
    const child = editAt(node[key], path, index + 1, edit)
    if (child === NOTHING) return NOTHING
    const copy = node.slice()
    copy[key] = child
    return copy
  }
  if (Predicate.isObject(node)) {
    const name = String(key)
    if (!Object.hasOwn(node, name)) return NOTHING
    const child = editAt(node[name], path, index + 1, edit)
    if (child === NOTHING) return NOTHING
    return { ...node, [name]: child }
  }
  return NOTHING
}

const setEdit = (value: unknown): Edit => (container, key) => {
  if (Array.isArray(container)) {
    if (typeof key !== "number" || !Number.isInteger(key) || key < 0 || key > container.length) return NOTHING
    const copy = container.slice()
    copy[key] = value
    return copy
  }
  if (Predicate.isObject(container)) return { ...container, [String(key)]: value }
  return NOTHING
}

const removeEdit: Edit = (container, key) => {
  if (Array.isArray(container)) {
    if (typeof key !== "number" || !Number.isInteger(key) || key < 0 || key >= container.length) return NOTHING
    const copy = container.slice()
    copy.splice(key, 1)
    return copy
  }
  if (Predicate.isObject(container)) {
    const name = String(key)
    if (!Object.hasOwn(container, name)) return NOTHING
    const copy = { ...container }
    delete copy[name]
    return copy
  }
  return NOTHING
}

const renameEdit = (to: string): Edit => (container, key) => {
  if (!Predicate.isObject(container)) return NOTHING
  const name = String(key)
  if (!Object.hasOwn(container, name) || Object.hasOwn(container, to) || name === to) return NOTHING
  // Rebuild so the renamed key keeps its position (a reader diffing the file sees one line change).
  const copy: Record<string, unknown> = {}
  for (const k of Object.keys(container)) copy[k === name ? to : k] = container[k]
  return copy
}

/**
 * Applies one operation; returns the input unchanged when the operation does not apply.
 *
 * @category combinators
 */
export const applyOperation = (json: unknown, operation: FixOperation): unknown => {
  const edit = operation.op === "set"
    ? setEdit(operation.value)
    : operation.op === "remove"
    ? removeEdit
    : renameEdit(operation.to)
  if (operation.path.length === 0) return operation.op === "set" ? operation.value : json
  const result = editAt(json, operation.path, 0, edit)
  return result === NOTHING ? json : result
}

/**
 * Applies fixes in order and returns the new document; the input is not modified. A fix shared by
 * several findings (the same object) is applied once.
 *
 * @category combinators
 */
export const applyFixes = (json: unknown, fixes: Iterable<Fix>): unknown => {
  const seen = new Set<Fix>()
  let result = json
  for (const fix of fixes) {
    if (seen.has(fix)) continue
    seen.add(fix)
    for (const operation of fix.operations) result = applyOperation(result, operation)
  }
  return result
}
