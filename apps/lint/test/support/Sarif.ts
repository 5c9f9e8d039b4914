/**
 * Validation against the SARIF 2.1.0 JSON schema (test/fixtures/sarif/sarif-schema-2.1.0.json, the
 * OASIS committee specification's schema from oasis-tcs/sarif-spec). Ajv is a dev dependency of
 * the tools workspace, so it is loaded from there.
 */
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as path from "node:path"

const root = path.resolve(import.meta.dirname, "..", "..", "..", "..")
const schemaFile = path.resolve(import.meta.dirname, "..", "fixtures", "sarif", "sarif-schema-2.1.0.json")

interface AjvInstance {
  compile: (schema: unknown) => ((data: unknown) => boolean) & { errors?: unknown }
}

/** Returns the schema errors of a SARIF log (empty when valid). */
export const sarifErrors = (log: unknown): Array<unknown> => {
  const require = createRequire(path.join(root, "tools", "package.json"))
  const Ajv = require("ajv").default as new(options: Record<string, unknown>) => AjvInstance
  // Formats (uri, uri-reference, date-time) are checked by the tests themselves: Ajv 8 needs a
  // plugin for them that the tools workspace does not declare.
  const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false })
  const validate = ajv.compile(JSON.parse(fs.readFileSync(schemaFile, "utf8")))
  return validate(log) ? [] : (validate.errors as Array<unknown>)
}
