// The contract from the client side: effect's typed HttpApiClient, generated from the same `Api`,
// against the real server. Successes decode into the domain classes; each declared error decodes
// into its class by status, so a client can tell 400 from 404 without parsing messages.
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Api } from "@svc/api/Api.ts"
import { Authorization } from "@svc/api/Authorization.ts"
import { BadRequest, NotFound } from "@svc/api/Errors.ts"
import { CreateBatchCallRequest } from "@svc/domain/models/BatchCall.ts"
import { CreateContactRequest } from "@svc/domain/models/ContactInput.ts"
import { ListContactsRequest, ListContactsResponse } from "@svc/domain/models/ListContacts.ts"
import { Effect, Layer, Schema } from "effect"
import { FetchHttpClient, HttpClientRequest } from "effect/http"
import { HttpApiClient, HttpApiMiddleware } from "effect/http-api"
import * as TestServer from "./support/TestServer.ts"

let server: TestServer.TestServer
let key: string

beforeAll(async () => {
  server = await TestServer.start()
  key = (await server.org()).key
})
afterAll(() => server.close())

const withClient = <A, E>(use: (client: HttpApiClient.ForApi<typeof Api>) => Effect.Effect<A, E>) =>
  Effect.runPromise(
    Effect.flatMap(HttpApiClient.make(Api, { baseUrl: "http://svc.test" }), use).pipe(
      Effect.provide(
        Layer.mergeAll(
          HttpApiMiddleware.layerClient(Authorization, ({ next, request }) =>
            next(
              // what the vendor's generated client adds to every request
              HttpClientRequest.setHeaders(HttpClientRequest.bearerToken(request, key), {
                "x-stainless-lang": "js",
                "x-stainless-retry-count": "0",
                "x-stainless-package-version": "5.66.1"
              })
            )),
          FetchHttpClient.layer.pipe(Layer.provide(Layer.succeed(FetchHttpClient.Fetch, server.fetch)))
        )
      )
    )
  )

describe("typed client", () => {
  it("creates and lists contacts through the generated client", async () => {
    const page = await withClient((client) =>
      Effect.gen(function*() {
        yield* client.contacts.createContact({
          payload: Schema.decodeUnknownSync(CreateContactRequest)({ phone_number: "+14155550155", first_name: "Zoë" })
        })
        return yield* client.contacts.listContacts({
          payload: new ListContactsRequest({ search_query: "zoë", limit: 10, sort_order: "desc" })
        })
      })
    )
    assert.instanceOf(page, ListContactsResponse)
    assert.strictEqual(page.total, 1)
    assert.strictEqual(page.items[0]?.first_name, "Zoë")
  })

  it("decodes a 404 into the NotFound error and a 400 into BadRequest", async () => {
    const missing = await withClient((client) =>
      Effect.flip(client.batchTests.getBatchTest({ params: { test_case_batch_job_id: "nope" } }))
    )
    assert.instanceOf(missing, NotFound)
    const bad = await withClient((client) =>
      Effect.flip(
        client.batchCalls.createBatchCall({
          payload: Schema.decodeUnknownSync(CreateBatchCallRequest)({
            from_number: "+14155550100",
            tasks: [{ to_number: "+14155550101" }]
          })
        })
      )
    )
    // the number is not the org's: the spec's 404 "not found under the given key"
    assert.instanceOf(bad, NotFound)
    const duplicate = await withClient((client) => {
      const payload = Schema.decodeUnknownSync(CreateContactRequest)({ phone_number: "+14155550177" })
      return Effect.flip(
        Effect.andThen(client.contacts.createContact({ payload }), client.contacts.createContact({ payload }))
      )
    })
    assert.instanceOf(duplicate, BadRequest)
    assert.include(duplicate.message, "+14155550177")
  })
})
