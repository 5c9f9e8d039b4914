/**
 * The input rules every endpoint applies to what its schemas cannot see, after the API key is checked
 * and before anything is decoded (docs/decisions/0105-input-rules.md). A request that breaks one is a 400
 * naming the parameter or field and the rule. The server implements it (apps/server/src/http/InputRules.ts);
 * clients have nothing to add.
 */
import { HttpApiMiddleware } from "effect/http-api"
import { BadRequest } from "./Errors.ts"

/** @category services */
export class InputRules extends HttpApiMiddleware.Service<InputRules>()("@svc/api/InputRules", {
  error: BadRequest
}) {}
