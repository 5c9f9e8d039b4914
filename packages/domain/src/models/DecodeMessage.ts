/**
 * Turns a schema decode failure into one sentence a person can act on: the field's path in `a.b[3].c` form,
 * the rule it broke, and the value that was sent, e.g.
 * `tasks[3].to_number must be an E.164 number like +14155550123 (got "555-1234")`.
 * The HTTP edge puts the sentence into the spec's error body `{"status":"error","message":...}` (spec, Errors:
 * 400 "invalid request format"; design: "a message a person can act on (which field, which rule)").
 *
 * Only the first issue is described. The rule comes, in order, from the failing node's own `message` or
 * `expected` annotation (or `messageMissingKey`), from the nearest enclosing check's annotation, and last from
 * the schema's shape ("must be a string"). Messages are written as clauses that follow the path ("must be ...",
 * "is required"); a message that is a sentence of its own is attached after a colon.
 *
 * A key the schema does not define (decoded with `onExcessProperty: "error"`, RequestDecoding.ts) "is not a
 * known field of this request", or "not a known parameter of this endpoint" in a query string.
 *
 * The value "got" is read from the input recorded in the issues (decode with `reportInput: true`) or, when the
 * caller passes it, from the raw input itself, which works whatever the parse options were.
 */
import { Schema, type SchemaAST, SchemaIssue } from "effect"

/**
 * Options of {@link formatDecodeError}.
 *
 * @category models
 */
export interface DecodeMessageOptions {
  /** The raw value that failed to decode; lets the message quote the offending value. */
  readonly input?: unknown
  /** What to call the value itself when the failure is at its root; default `"request body"`. */
  readonly root?: string
  /**
   * The value is a request's path parameters or query string: the subject reads `query parameter llm_id`
   * and an unknown key is "not a known parameter" rather than a field.
   */
  readonly parameters?: "path" | "query"
}

/**
 * Formats a path as `a.b[3].c`; keys that are not identifiers are quoted (`headers["X-Id"]`).
 *
 * @category encoding
 */
export const formatPath = (path: ReadonlyArray<PropertyKey>): string => {
  let out = ""
  for (const key of path) {
    if (typeof key === "number") {
      out += `[${key}]`
    } else if (typeof key === "string" && /^[A-Za-z_$][\w$]*$/.test(key)) {
      out += out === "" ? key : `.${key}`
    } else {
      out += `[${JSON.stringify(String(key))}]`
    }
  }
  return out
}

/**
 * One sentence describing the first problem of a decode failure.
 *
 * @category encoding
 */
export const formatDecodeError = (
  error: Schema.SchemaError | SchemaIssue.Issue,
  options?: DecodeMessageOptions
): string => {
  const issue = Schema.isSchemaError(error) ? error.issue : error
  const found = firstLeaf(issue, [], { rule: undefined, captured: undefined })
  const root = options?.root ?? "request body"
  const valueAt = (path: ReadonlyArray<PropertyKey>): Lookup =>
    options !== undefined && "input" in options
      ? lookup(options.input, path)
      : found.captured === undefined
      ? notFound
      : lookup(found.captured.input, path.slice(found.captured.depth))

  const leaf = found.leaf
  if (leaf._tag === "AnyOf" && leaf.issues.length === 0 && findClause(leaf.ast.annotations) === undefined) {
    const discriminated = discriminatorOf(leaf.ast)
    const value = valueAt(found.path)
    if (discriminated !== undefined && (!value.found || isRecord(value.value))) {
      const keyPath = [...found.path, discriminated.key]
      const allowed = discriminated.values.map(showValue).join(", ")
      const sent = valueAt(keyPath)
      const rule = allowed.includes(", ") ? `one of ${allowed}` : allowed
      return sent.found || !value.found
        ? sentence(formatPath(keyPath), `must be ${rule}`, sent)
        : sentence(formatPath(keyPath), `is required and must be ${rule}`, notFound)
    }
  }
  const parameters = options?.parameters
  const subject = found.path.length === 0
    ? root
    : parameters === undefined
    ? formatPath(found.path)
    : `${parameters} parameter ${formatPath(found.path)}`
  const value = leaf._tag === "MissingKey" ? notFound : valueAt(found.path)
  return sentence(subject, clauseOf(leaf, found.rule, parameters !== undefined), value)
}

// ---------------------------------------------------------------------------------------------------------------
// Walking the issue tree
// ---------------------------------------------------------------------------------------------------------------

interface Captured {
  readonly input: unknown
  readonly depth: number
}

interface Found {
  readonly leaf: SchemaIssue.Issue
  readonly path: ReadonlyArray<PropertyKey>
  readonly rule: string | undefined
  readonly captured: Captured | undefined
}

const firstLeaf = (
  issue: SchemaIssue.Issue,
  path: ReadonlyArray<PropertyKey>,
  context: { readonly rule: string | undefined; readonly captured: Captured | undefined }
): Found => {
  // Keep the shallowest node that reported a given input: a check that points into its own input (a cross-field
  // rule) reports the whole object again on the inner node, one level deeper than where that object lives.
  const captured = SchemaIssue.hasInput(issue) &&
      (context.captured === undefined || context.captured.input !== issue.input)
    ? { input: issue.input, depth: path.length }
    : context.captured
  switch (issue._tag) {
    case "Pointer":
      return firstLeaf(issue.issue, [...path, ...issue.path], { rule: context.rule, captured })
    case "Encoding":
      return firstLeaf(issue.issue, path, { rule: context.rule, captured })
    case "Filter":
      return firstLeaf(issue.issue, path, { rule: findClause(issue.filter.annotations) ?? context.rule, captured })
    case "Composite":
      return firstLeaf(issue.issues[0], path, { rule: context.rule, captured })
    case "AnyOf": {
      const first = issue.issues[0]
      return first === undefined
        ? { leaf: issue, path, rule: context.rule, captured }
        : firstLeaf(first, path, { rule: context.rule, captured })
    }
    default:
      return { leaf: issue, path, rule: context.rule, captured }
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Rules
// ---------------------------------------------------------------------------------------------------------------

const clausePattern = /^(must|is|are|cannot|can|should|has|have|may|needs?|was|were)\b/

const asClause = (message: string): string => clausePattern.test(message) ? message : `: ${message}`

const findClause = (annotations: object | undefined): string | undefined => {
  if (annotations === undefined) return undefined
  const { expected, message } = annotations as { readonly expected?: unknown; readonly message?: unknown }
  if (typeof message === "string") return asClause(message)
  if (typeof expected === "string") return `must be ${expected}`
  return undefined
}

const clauseOf = (leaf: SchemaIssue.Issue, rule: string | undefined, parameter: boolean): string => {
  switch (leaf._tag) {
    case "MissingKey": {
      const message = leaf.annotations?.messageMissingKey
      return typeof message === "string" ? asClause(message) : "is required"
    }
    case "UnexpectedKey": {
      const message = leaf.ast.annotations?.messageUnexpectedKey
      // decision 0105: unknown fields are rejected, never dropped
      return typeof message === "string"
        ? asClause(message)
        : parameter
        ? "is not a known parameter of this endpoint"
        : "is not a known field of this request"
    }
    case "InvalidValue":
      return findClause(leaf.annotations) ?? rule ?? "is not valid"
    case "Forbidden":
      return findClause(leaf.annotations) ?? rule ?? "is not allowed"
    case "InvalidType":
    case "AnyOf":
      return findClause(leaf.ast.annotations) ?? rule ?? `must be ${describe(leaf.ast)}`
    case "OneOf":
      return findClause(leaf.ast.annotations) ?? "matches more than one of the allowed shapes"
    default:
      return rule ?? "is not valid"
  }
}

/** What a schema accepts, as a noun phrase: "a string", "one of \"asc\", \"desc\"". */
const describe = (ast: SchemaAST.AST): string => {
  const expected = ast.annotations?.expected
  if (typeof expected === "string") return expected
  switch (ast._tag) {
    case "String":
    case "TemplateLiteral":
      return "a string"
    case "Number":
      return "a number"
    case "Boolean":
      return "true or false"
    case "Null":
      return "null"
    case "Undefined":
    case "Void":
    case "Never":
      return "absent"
    case "Literal":
      return showValue(ast.literal)
    case "Enum":
      return `one of ${ast.enums.map(([, value]) => showValue(value)).join(", ")}`
    case "Arrays":
      return "an array"
    case "Objects":
    case "ObjectKeyword":
    case "Declaration":
      return "an object"
    case "Suspend":
      return describe(ast.thunk())
    case "Union": {
      if (ast.types.length > 1 && ast.types.every((member) => member._tag === "Literal")) {
        return `one of ${ast.types.map(describe).join(", ")}`
      }
      return [...new Set(ast.types.map(describe))].join(" or ")
    }
    default:
      return "a valid value"
  }
}

/** The literal-valued key every member of a union of objects has (`type` for filters and engines). */
const discriminatorOf = (
  ast: SchemaAST.AST
): { readonly key: PropertyKey; readonly values: ReadonlyArray<unknown> } | undefined => {
  if (ast._tag !== "Union") return undefined
  const members: Array<SchemaAST.Objects> = []
  for (const member of ast.types) {
    if (member._tag !== "Objects") return undefined
    members.push(member)
  }
  const first = members[0]
  if (first === undefined) return undefined
  for (const candidate of first.propertySignatures) {
    const values: Array<unknown> = []
    for (const member of members) {
      const property = member.propertySignatures.find((signature) => signature.name === candidate.name)
      if (property === undefined || property.type._tag !== "Literal") break
      values.push(property.type.literal)
    }
    if (values.length === members.length) return { key: candidate.name, values }
  }
  return undefined
}

// ---------------------------------------------------------------------------------------------------------------
// Values
// ---------------------------------------------------------------------------------------------------------------

type Lookup = { readonly found: true; readonly value: unknown } | { readonly found: false }

const notFound: Lookup = { found: false }

const isRecord = (value: unknown): value is Record<PropertyKey, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const lookup = (input: unknown, path: ReadonlyArray<PropertyKey>): Lookup => {
  let current = input
  for (const key of path) {
    if (Array.isArray(current) && typeof key === "number" && key < current.length) {
      current = current[key]
    } else if (isRecord(current) && Object.prototype.hasOwnProperty.call(current, key)) {
      current = current[key]
    } else {
      return notFound
    }
  }
  return current === undefined ? notFound : { found: true, value: current }
}

const maxShown = 80

const showValue = (value: unknown): string => {
  let text: string
  try {
    text = typeof value === "bigint" ? `${value}` : JSON.stringify(value) ?? String(value)
  } catch {
    text = String(value)
  }
  return text.length > maxShown ? `${text.slice(0, maxShown - 1)}…` : text
}

const sentence = (subject: string, clause: string, value: Lookup): string => {
  const got = value.found && !clause.includes("(got ") ? ` (got ${showValue(value.value)})` : ""
  return clause.startsWith(":") ? `${subject}${clause}${got}` : `${subject} ${clause}${got}`
}
