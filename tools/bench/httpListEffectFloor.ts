// The fixed stack's floor for the list-contacts HTTP benchmark (issue 17 item 1): what Effect's HTTP server
// (`effect/http` HttpRouter on @effect/platform-node's NodeHttpServer) and @effect/sql-pg cost per request with
// nothing of svc on top. It answers POST /list-contacts exactly as the bare handler (tools/bench/httpListBaseline.ts)
// does: the same SQL (ContactsQuery.pageStatement: page rows and the maintained org count in one statement, run as
// svc's ContactsRepo runs it), rows turned into the same JSON in Node. No HttpApi, no schema, no middleware, no auth,
// no logging or metrics. If this server is below 1.0x the bare one, so is anything built on the stack the product
// is fixed to (AGENTS: Effect 4.1, effect/http-api, @effect/sql-pg), whatever svc's own path costs.
//
//   node tools/bench/httpListEffectFloor.ts <port> <database url> <org id>
import { NodeHttpServer, NodeRuntime } from "@effect/platform-node"
import { OrgId } from "@svc/domain/models/Ids.ts"
import { ListContactsRequest } from "@svc/domain/models/ListContacts.ts"
import * as ContactsQuery from "@svc/store/contacts/ContactsQuery.ts"
import * as Database from "@svc/store/db/Database.ts"
import { Effect, Layer, Redacted } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { SqlClient } from "effect/sql"
import { createServer } from "node:http"

const [portArg, url, orgArg] = process.argv.slice(2)
if (portArg === undefined || url === undefined || orgArg === undefined) throw new Error("usage: <port> <url> <org>")
// the org the parent bench created and passed on: trusted, so branded here
const orgId = OrgId.make(orgArg)

const statement = ContactsQuery.pageStatement(
  orgId,
  new ListContactsRequest({ limit: 100, sort_order: "desc" }),
  { _tag: "First" }
)

const contact = (row: Record<string, unknown>) => {
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(row)) {
    if (key === "total" || value === null || value === undefined) continue
    // @effect/sql-pg reads int8 as bigint (pg as text): the timestamps become numbers either way
    out[key] = typeof value === "bigint" || (typeof value === "string" && /_timestamp$/.test(key))
      ? Number(value)
      : value
  }
  return out
}

const ListContacts = HttpRouter.add(
  "POST",
  "/list-contacts",
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    yield* Effect.orDie(request.text)
    const sql = yield* SqlClient.SqlClient
    const rows = yield* Effect.orDie(sql.unsafe<Record<string, unknown>>(statement.text, statement.params))
    const items = rows.slice(0, 100).map(contact)
    const body = JSON.stringify({ has_more: rows.length > 100, items, total: Number(rows[0]?.["total"] ?? 0) })
    return HttpServerResponse.text(body, { contentType: "application/json" })
  })
)

HttpRouter.serve(ListContacts, { disableListenLog: true, disableLogger: true }).pipe(
  Layer.provide(NodeHttpServer.layer(() => createServer(), { port: Number(portArg), host: "127.0.0.1" })),
  Layer.provide(Database.layerFromUrl(Redacted.make(url), { migrate: false })),
  Layer.launch,
  NodeRuntime.runMain
)
