/**
 * Bearer authentication (spec: Authentication): `Authorization: Bearer <API_KEY>`; the key
 * decides the org, and every handler reads the org from `CurrentOrg`, never from the request.
 */
import type { OrgId } from "@svc/domain/models/Ids.ts"
import { Context } from "effect"
import { HttpApiMiddleware, HttpApiSecurity } from "effect/http-api"
import { Unauthorized } from "./Errors.ts"

/** The caller, as the API key identifies it. @category services */
export class CurrentOrg extends Context.Service<CurrentOrg, {
  readonly orgId: OrgId
  /** Hash prefix of the key used: rate limits and create-batch-call retries are per key. */
  readonly apiKeyId: string
}>()("@svc/api/CurrentOrg") {}

/** @category services */
export class Authorization extends HttpApiMiddleware.Service<Authorization, {
  provides: CurrentOrg
  requires: never
}>()("@svc/api/Authorization", {
  requiredForClient: true,
  security: { bearer: HttpApiSecurity.bearer },
  error: Unauthorized
}) {}
