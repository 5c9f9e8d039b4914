/**
 * Every route of svc-server: the HttpApi (spec endpoints and companions, `/openapi.json`), the docs
 * page (`/docs`), health, metrics, Twilio's status callbacks, and the global middleware that shapes errors, logs and counts
 * every request. Needs only a `SqlClient`: the repositories are built here.
 */
import { Api } from "@svc/api/Api.ts"
import { BackfillRepo } from "@svc/store/backfill/BackfillRepo.ts"
import { BatchCallLists } from "@svc/store/batches/BatchCallLists.ts"
import { BatchCallsRepo } from "@svc/store/batches/BatchCallsRepo.ts"
import { BatchProgressRepo } from "@svc/store/batches/BatchProgressRepo.ts"
import { BatchRetry as BatchRetryRepo } from "@svc/store/batches/BatchRetry.ts"
import { BatchTestsRepo, TestCaseDefinitionsRepo, TestRunsRepo } from "@svc/store/batchTests/index.ts"
import { CallsApiRepo } from "@svc/store/calls/CallsApiRepo.ts"
import { TwilioCallsRepo } from "@svc/store/carriers/twilio/TwilioCallsRepo.ts"
import { ContactsRepo } from "@svc/store/contacts/ContactsRepo.ts"
import { CursorKeys } from "@svc/store/db/CursorKeys.ts"
import { ApiKeys } from "@svc/store/orgs/ApiKeys.ts"
import { SuppressionsRepo } from "@svc/store/suppressions/SuppressionsRepo.ts"
import { WebhookDeliveryList } from "@svc/store/webhooks/WebhookDeliveryList.ts"
import { Layer } from "effect"
import { HttpApiBuilder, HttpApiScalar } from "effect/http-api"
import * as TwilioStatusCallback from "../carriers/twilio/TwilioStatusCallback.ts"
import * as Backfill from "../handlers/Backfill.ts"
import * as BatchCalls from "../handlers/BatchCalls.ts"
import * as BatchLists from "../handlers/BatchLists.ts"
import * as BatchProgress from "../handlers/BatchProgress.ts"
import * as BatchRetry from "../handlers/BatchRetry.ts"
import * as BatchTests from "../handlers/batchTests/BatchTests.ts"
import * as TestCases from "../handlers/batchTests/TestCases.ts"
import * as Calls from "../handlers/Calls.ts"
import * as Contacts from "../handlers/Contacts.ts"
import * as Health from "../handlers/Health.ts"
import * as Suppressions from "../handlers/Suppressions.ts"
import * as WebhookDeliveries from "../handlers/WebhookDeliveries.ts"
import * as Console from "../http/Console.ts"
import * as Admission from "../middleware/Admission.ts"
import * as Authorization from "../middleware/Authorization.ts"
import { BodyBudget } from "../middleware/BodyBudget.ts"
import * as BodyLimits from "../middleware/BodyLimits.ts"
import { DatabaseAvailability } from "../middleware/DatabaseAvailability.ts"
import * as DeprecationHeaders from "../middleware/DeprecationHeaders.ts"
import * as ErrorResponses from "../middleware/ErrorResponses.ts"
import * as InputRules from "../middleware/InputRules.ts"
import * as Observability from "../middleware/Observability.ts"
import { RateLimitWindows } from "../middleware/RateLimitWindows.ts"

const Repositories = Layer.mergeAll(
  ApiKeys.layer,
  BackfillRepo.layer,
  BatchCallsRepo.layer,
  BatchProgressRepo.layer,
  BatchRetryRepo.layer,
  BatchCallLists.layer.pipe(Layer.provide([CursorKeys.layer, BatchProgressRepo.layer])),
  BatchTestsRepo.layer.pipe(Layer.provide(CursorKeys.layer)),
  TestCaseDefinitionsRepo.layer.pipe(Layer.provide(CursorKeys.layer)),
  TestRunsRepo.layer.pipe(Layer.provide(CursorKeys.layer)),
  ContactsRepo.layer.pipe(Layer.provide(CursorKeys.layer)),
  RateLimitWindows.layer,
  CallsApiRepo.layer.pipe(Layer.provide(CursorKeys.layer)),
  SuppressionsRepo.layer.pipe(Layer.provide(CursorKeys.layer)),
  WebhookDeliveryList.layer.pipe(Layer.provide(CursorKeys.layer)),
  CursorKeys.layer,
  TwilioCallsRepo.layer,
  DatabaseAvailability.layer
)

const ApiRoutes = HttpApiBuilder.layer(Api, { openapiPath: "/openapi.json" }).pipe(
  Layer.provide([
    Contacts.layer,
    Backfill.layer,
    BatchCalls.layer,
    BatchProgress.layer,
    BatchRetry.layer,
    BatchLists.layer,
    BatchTests.layer,
    Calls.layer,
    TestCases.layer,
    Suppressions.layer,
    WebhookDeliveries.layer
  ]),
  Layer.provide([Authorization.layer, InputRules.layer])
)

/** Options of the router that serves {@link routes} (InputRules.ts: path parameters up to 4096 characters). */
export const routerConfig = InputRules.routerConfig

/** @category layers */
export const routes = Layer.mergeAll(
  ApiRoutes,
  HttpApiScalar.layer(Api, { path: "/docs" }),
  // the console page (decision 0800): static files; the page itself calls the API above with the user's key
  Console.layer,
  Health.layer,
  // carrier-facing, outside the API key check: Twilio signs its callbacks instead (decision 0606)
  TwilioStatusCallback.layer,
  Observability.layer,
  // before the body is read or an error shaped: a refused request costs as little as it can (the first global
  // middleware added is the outermost; Observability still counts the 503s)
  Admission.layer,
  ErrorResponses.layer,
  DeprecationHeaders.layer,
  BodyLimits.layer
).pipe(Layer.provide(Repositories), Layer.provide(BodyBudget.layer))
