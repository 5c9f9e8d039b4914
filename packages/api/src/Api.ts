/**
 * The HTTP contract of svc (spec: voice-agent-api.md): the five spec endpoints and the companion
 * endpoints that make them usable, in the vendor's paths and shapes. The server implements it, the
 * tests call it through a typed client, and `/openapi.json` is generated from it (version 3.0.0,
 * spec: Versioning).
 */
import { requestParseOptions } from "@svc/domain/models/RequestDecoding.ts"
import { HttpApi, OpenApi } from "effect/http-api"
import { Authorization } from "./Authorization.ts"
import { BackfillGroup } from "./groups/Backfill.ts"
import { BatchCallsGroup } from "./groups/BatchCalls.ts"
import { BatchListsGroup } from "./groups/BatchLists.ts"
import { BatchProgressGroup } from "./groups/BatchProgress.ts"
import { BatchRetryGroup } from "./groups/BatchRetry.ts"
import { BatchTestsGroup } from "./groups/BatchTests.ts"
import { CallsGroup } from "./groups/Calls.ts"
import { ContactsGroup } from "./groups/Contacts.ts"
import { SuppressionsGroup } from "./groups/Suppressions.ts"
import { TestCasesGroup } from "./groups/TestCases.ts"
import { WebhookDeliveriesGroup } from "./groups/WebhookDeliveries.ts"
import { InputRules } from "./InputRules.ts"

/** @category models */
export class Api extends HttpApi.make("svc")
  .add(ContactsGroup)
  .add(BackfillGroup)
  .add(BatchCallsGroup)
  .add(BatchProgressGroup)
  .add(BatchRetryGroup)
  .add(BatchListsGroup)
  .add(BatchTestsGroup)
  .add(CallsGroup)
  .add(TestCasesGroup)
  .add(SuppressionsGroup)
  .add(WebhookDeliveriesGroup)
  // Every endpoint, in one place: the API key, then the input rules (decision 0105: a query parameter an endpoint
  // does not declare is a 400 naming it; seven endpoints once ignored them because their groups had
  // been given the key check alone). First added, innermost: the rules run after the key check, so nothing of an
  // unauthenticated request is read.
  .middleware(InputRules)
  .middleware(Authorization)
  .annotateMerge(OpenApi.annotations({
    title: "svc voice-agent API",
    version: "3.0.0",
    description: "Contacts, contact-analysis backfill, batch outbound calls, batch tests and calls. Every error is " +
      "{\"status\":\"error\",\"message\":\"...\"}."
  }))
  // decision 0105: a body field, query parameter or path parameter the contract does not define is a
  // 400 naming it, on every endpoint; responses and headers keep the schema defaults
  .annotate(HttpApi.PayloadParseOptions, requestParseOptions)
  .annotate(HttpApi.QueryParseOptions, requestParseOptions)
  .annotate(HttpApi.ParamsParseOptions, requestParseOptions)
{}
