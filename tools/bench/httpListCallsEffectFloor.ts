// The fixed stack's floor for the list-calls HTTP benchmark (issue 17 item 1): what Effect's HTTP server
// (`effect/http` HttpRouter on @effect/platform-node's NodeHttpServer) and @effect/sql-pg cost per request with
// nothing of svc on top. It answers any POST exactly as the bare handler (tools/bench/httpListCallsBaseline.ts)
// does: the body decoded with the same schema, the same two statements (CallsApiRepo.listStatements: page and count
// at once, unprepared as the repository runs filtered ones), each call's JSON as `call_json` returns it. No HttpApi,
// no middleware, no auth, no pagination key, no logging or metrics.
//
//   node tools/bench/httpListCallsEffectFloor.ts <port> <database url> <org id>
import { NodeHttpServer, NodeRuntime } from "@effect/platform-node"
import { ListCallsBody } from "@svc/domain/models/Call.ts"
import { OrgId } from "@svc/domain/models/Ids.ts"
import * as CallsApi from "@svc/store/calls/CallsApiRepo.ts"
import * as Database from "@svc/store/db/Database.ts"
import { Effect, Layer, Redacted, Schema } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { SqlClient } from "effect/sql"
import { createServer } from "node:http"

const [portArg, url, orgArg] = process.argv.slice(2)
if (portArg === undefined || url === undefined || orgArg === undefined) throw new Error("usage: <port> <url> <org>")
// the org the parent bench created and passed on: trusted, so branded here
const orgId = OrgId.make(orgArg)

const decode = Schema.decodeUnknownSync(ListCallsBody)

const ListCalls = HttpRouter.add(
  "POST",
  "/*",
  Effect.gen(function*() {
    const request = decode(JSON.parse(yield* Effect.orDie((yield* HttpServerRequest.HttpServerRequest).text)))
    const sql = yield* SqlClient.SqlClient
    const st = CallsApi.listStatements(orgId, request, undefined)
    const [page, counted] = yield* Effect.orDie(Effect.all([
      sql.unsafe<{ call: unknown }>(st.page.text, st.page.params as Array<never>).unprepared,
      sql.unsafe<{ total: string }>(st.count.text, st.count.params as Array<never>).unprepared
    ], { concurrency: 2 }))
    const body = JSON.stringify({
      has_more: page.length > request.limit,
      items: page.slice(0, request.limit).map((r) => r.call),
      total: Number(counted[0]?.total ?? 0)
    })
    return HttpServerResponse.text(body, { contentType: "application/json" })
  })
)

HttpRouter.serve(ListCalls, { disableListenLog: true, disableLogger: true }).pipe(
  Layer.provide(NodeHttpServer.layer(() => createServer(), { port: Number(portArg), host: "127.0.0.1" })),
  Layer.provide(Database.layerFromUrl(Redacted.make(url), { migrate: false })),
  Layer.launch,
  NodeRuntime.runMain
)
