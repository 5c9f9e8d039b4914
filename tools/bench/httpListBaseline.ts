// The floor for the list-contacts HTTP benchmark: a minimal node:http + pg server that answers
// POST /list-contacts with the first page (limit 100) and the exact total the same way svc does:
// the same SQL text (ContactsQuery.pageStatement: page rows + maintained org count in one
// statement), a named prepared statement, rows turned into the same JSON. No auth, no validation,
// no Effect: what PostgreSQL plus Node can do at best on this machine.
//
//   node tools/bench/httpListBaseline.ts <port> <database url> <org id>
import { OrgId } from "@svc/domain/models/Ids.ts"
import { ListContactsRequest } from "@svc/domain/models/ListContacts.ts"
import * as ContactsQuery from "@svc/store/contacts/ContactsQuery.ts"
import * as http from "node:http"
import pg from "pg"

const [portArg, url, orgArg] = process.argv.slice(2)
if (portArg === undefined || url === undefined || orgArg === undefined) throw new Error("usage: <port> <url> <org>")
// the org the parent bench created and passed on: trusted, so branded here
const orgId = OrgId.make(orgArg)

const statement = ContactsQuery.pageStatement(
  orgId,
  new ListContactsRequest({ limit: 100, sort_order: "desc" }),
  { _tag: "First" }
)
const pool = new pg.Pool({ connectionString: url, max: 10 })

const contact = (row: Record<string, unknown>) => {
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(row)) {
    if (key === "total" || value === null || value === undefined) continue
    out[key] = typeof value === "string" && /_timestamp$/.test(key) ? Number(value) : value
  }
  return out
}

http.createServer((request, response) => {
  request.resume()
  request.on("end", () => {
    pool.query({ name: "page", text: statement.text, values: [...statement.params] }).then((result) => {
      const rows = result.rows as Array<Record<string, unknown>>
      const items = rows.slice(0, 100).map(contact)
      const body = JSON.stringify({ has_more: rows.length > 100, items, total: Number(rows[0]?.["total"] ?? 0) })
      response.writeHead(200, { "content-type": "application/json" })
      response.end(body)
    }, (error: Error) => {
      response.writeHead(500)
      response.end(error.message)
    })
  })
}).listen(Number(portArg), "127.0.0.1", () => process.stdout.write("ready\n"))
