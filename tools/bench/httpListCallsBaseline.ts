// The floor for the list-calls HTTP benchmark (tools/bench/listCalls.bench.ts): a minimal node:http + pg server, in a
// process of its own as svc's is, that answers any POST with the list-calls page of the request body and its exact
// total the way svc does: the same two statements (CallsApiRepo.listStatements: page and count on two connections
// at once), each call's JSON as `call_json` returns it. No auth, no validation beyond decoding the body, no
// pagination key, no Effect: what PostgreSQL plus Node can do at best on this machine.
//
//   node tools/bench/httpListCallsBaseline.ts <port> <database url> <org id>
import { ListCallsBody } from "@svc/domain/models/Call.ts"
import { OrgId } from "@svc/domain/models/Ids.ts"
import * as CallsApi from "@svc/store/calls/CallsApiRepo.ts"
import { Schema } from "effect"
import * as http from "node:http"
import pg from "pg"

const [portArg, url, orgArg] = process.argv.slice(2)
if (portArg === undefined || url === undefined || orgArg === undefined) throw new Error("usage: <port> <url> <org>")
// the org the parent bench created and passed on: trusted, so branded here
const orgId = OrgId.make(orgArg)

const decode = Schema.decodeUnknownSync(ListCallsBody)
const pool = new pg.Pool({ connectionString: url, max: 4 })

http.createServer((req, res) => {
  const chunks: Array<Buffer> = []
  req.on("data", (chunk: Buffer) => chunks.push(chunk))
  req.on("end", () => {
    const request = decode(JSON.parse(Buffer.concat(chunks).toString("utf8")))
    const st = CallsApi.listStatements(orgId, request, undefined)
    Promise.all([pool.query(st.page.text, st.page.params), pool.query(st.count.text, st.count.params)]).then(
      ([page, counted]) => {
        const items = page.rows.slice(0, request.limit).map((r: { call: unknown }) => r.call)
        res.writeHead(200, { "content-type": "application/json" })
        res.end(JSON.stringify({
          has_more: page.rows.length > request.limit,
          items,
          total: Number(counted.rows[0].total)
        }))
      },
      (error: Error) => {
        res.writeHead(500)
        res.end(error.message)
      }
    )
  })
}).listen(Number(portArg), "127.0.0.1", () => process.stdout.write("listening\n"))
