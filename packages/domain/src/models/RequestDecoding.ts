/**
 * How the HTTP edge decodes requests with the models of this folder: bodies, query strings and path
 * parameters alike (docs/decisions/0105-input-rules.md).
 *
 * A field that the schema does not define is an error naming it, at every level the schemas define,
 * never dropped: the house lesson "never drop input silently" (a request field we cannot keep is an
 * error naming it). A dropped field is a setting the caller believes applied: a misspelt
 * `reserved_concurency`, the vendor's `retell_llm_dynamic_variables`, a filter condition's stray key.
 * What the vendor's own clients send is modelled instead (AgentOverride.ts), and the fields the
 * deprecation schedule removed say so by name.
 *
 * Decoding without these options (stored rows, imports) keeps Effect's default, which ignores extra
 * keys: those inputs are ours, not a caller's.
 */
import type { SchemaAST } from "effect"

/**
 * The parse options of every request decode: unknown fields are errors.
 *
 * @category models
 */
export const requestParseOptions: SchemaAST.ParseOptions = { onExcessProperty: "error" }
