/**
 * Routes live in the URL's fragment (`/console#/batches/batch_...`): the server serves one page, the browser's back
 * button works, and a link can be shared. Only ids appear in it, never the API key.
 */
export type Route =
  | { readonly page: "batches" }
  | { readonly page: "batch"; readonly id: string }
  | { readonly page: "calls"; readonly batchCallId?: string }
  | { readonly page: "call"; readonly id: string }
  | { readonly page: "contacts" }
  | { readonly page: "contact"; readonly id: string }
  | { readonly page: "webhooks"; readonly callId?: string }
  | { readonly page: "tests" }
  | { readonly page: "test"; readonly id: string }

export const parseRoute = (hash: string): Route => {
  const [path = "", query = ""] = hash.replace(/^#/, "").split("?")
  const parts = path.split("/").filter((p) => p !== "").map((p) => decodeURIComponent(p))
  const params = new URLSearchParams(query)
  const [first, id] = parts
  switch (first) {
    case "batches":
      return id === undefined ? { page: "batches" } : { page: "batch", id }
    case "calls": {
      const batch = params.get("batch_call_id")
      return id === undefined ? (batch === null ? { page: "calls" } : { page: "calls", batchCallId: batch }) : {
        page: "call",
        id
      }
    }
    case "contacts":
      return id === undefined ? { page: "contacts" } : { page: "contact", id }
    case "webhooks": {
      const call = params.get("call_id")
      return call === null ? { page: "webhooks" } : { page: "webhooks", callId: call }
    }
    case "tests":
      return id === undefined ? { page: "tests" } : { page: "test", id }
    default:
      return { page: "batches" }
  }
}

export const href = {
  batches: () => "#/batches",
  batch: (id: string) => `#/batches/${encodeURIComponent(id)}`,
  calls: (batchCallId?: string) =>
    batchCallId === undefined ? "#/calls" : `#/calls?batch_call_id=${encodeURIComponent(batchCallId)}`,
  call: (id: string) => `#/calls/${encodeURIComponent(id)}`,
  contacts: () => "#/contacts",
  contact: (id: string) => `#/contacts/${encodeURIComponent(id)}`,
  webhooks: (callId?: string) =>
    callId === undefined ? "#/webhooks" : `#/webhooks?call_id=${encodeURIComponent(callId)}`,
  tests: () => "#/tests",
  test: (id: string) => `#/tests/${encodeURIComponent(id)}`
}
