/**
 * The restart storm's API load (issue 30 item 3, decision 0441): closed-loop clients sending a mix of list-contacts,
 * list-calls, get-batch-call and small create-batch-calls to every server in turn, through kills and restarts, and
 * the verdict on every answer:
 *
 * - 2xx: served;
 * - 503 with `Retry-After`: refused while starting or overloaded, as the API promises (decisions 0009, 0546);
 * - no answer (connection refused or reset, no response): expected only when the server was down when the request
 *   began, or was killed while it ran (its slot's generation moved on); otherwise unexpected;
 * - anything else, a 503 without `Retry-After` included: unexpected.
 *
 * A server is down from just before its kill until its successor's `/readyz` answers 200: the load keeps sending to
 * it meanwhile, so whatever a starting server answers is judged.
 */
import * as http from "node:http"

/** One server's slot, as the storm keeps it across incarnations. */
export interface ServerSlot {
  readonly port: number
  /** False from just before a kill until the successor is ready. */
  up: boolean
  /** Moves on at every kill: a request that began in another generation met a kill. */
  generation: number
}

export interface Answer {
  readonly status: number
  readonly retryAfter: string | undefined
  readonly body: string
}

/** One HTTP request on a fresh connection (no keep-alive: a reused socket that a live server closed would look like a kill). */
export const request = (
  port: number,
  method: "GET" | "POST",
  target: string,
  key: string,
  body?: unknown,
  timeoutMs = 60_000
) =>
  new Promise<Answer>((resolve, reject) => {
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body))
    const outgoing = http.request({
      host: "127.0.0.1",
      port,
      method,
      path: target,
      agent: false,
      timeout: timeoutMs,
      headers: {
        authorization: `Bearer ${key}`,
        ...(payload === undefined ? {} : { "content-type": "application/json", "content-length": payload.length })
      }
    }, (response) => {
      const chunks: Array<Buffer> = []
      let ended = false
      response.on("data", (chunk: Buffer) => chunks.push(chunk))
      response.once("end", () => {
        ended = true
        const retryAfter = response.headers["retry-after"]
        resolve({
          status: response.statusCode ?? 0,
          retryAfter: Array.isArray(retryAfter) ? retryAfter[0] : retryAfter,
          body: Buffer.concat(chunks).toString()
        })
      })
      response.once("error", reject)
      // a server killed mid-body: the answer never ends (settles nothing if it did end)
      response.once("close", () => {
        if (!ended) reject(new Error(`the answer (${response.statusCode}) was cut off`))
      })
    })
    outgoing.once("timeout", () => outgoing.destroy(new Error(`no answer within ${timeoutMs} ms`)))
    outgoing.once("error", reject)
    outgoing.end(payload)
  })

export type Operation = "list-contacts" | "list-calls" | "get-batch-call" | "create-batch-call"

/** How often each operation is chosen (of 10). */
const MIX: ReadonlyArray<readonly [Operation, number]> = [
  ["list-contacts", 4],
  ["list-calls", 3],
  ["get-batch-call", 2],
  ["create-batch-call", 1]
]

export interface LoadResults {
  /** 2xx answers by operation. */
  readonly served: Record<Operation, number>
  /** 503 answers that carried Retry-After. */
  unavailable: number
  /** Requests with no answer that met a down or killed server. */
  noAnswerWhileDown: number
  /** Everything else: the first 30, with what happened. */
  readonly unexpected: Array<string>
  unexpectedCount: number
  /** Small batches the load created (their ids), answered 200. */
  readonly createdBatches: Array<string>
  /** Requests answered, all kinds, since the start: a restart's progress is measured in them. */
  answered: number
}

export interface LoadOptions {
  readonly slots: ReadonlyArray<ServerSlot>
  readonly key: string
  readonly fromNumber: string
  /** The batch get-batch-call asks about. */
  readonly batchCallId: string
  readonly clients: number
  /** Tasks in each small batch. */
  readonly smallBatchTasks: number
}

/**
 * Starts `clients` closed-loop clients; `stop` ends them after their request in flight and returns the results.
 */
export const startLoad = (options: LoadOptions) => {
  const results: LoadResults = {
    served: { "list-contacts": 0, "list-calls": 0, "get-batch-call": 0, "create-batch-call": 0 },
    unavailable: 0,
    noAnswerWhileDown: 0,
    unexpected: [],
    unexpectedCount: 0,
    createdBatches: [],
    answered: 0
  }
  let stopped = false
  let numbers = 0
  const unexpected = (what: string) => {
    results.unexpectedCount++
    if (results.unexpected.length < 30) results.unexpected.push(`${new Date().toISOString()} ${what}`)
  }
  const pick = (): Operation => {
    let roll = Math.random() * 10
    for (const [operation, weight] of MIX) {
      roll -= weight
      if (roll < 0) return operation
    }
    return "list-contacts"
  }
  const send = (port: number, operation: Operation) => {
    switch (operation) {
      case "list-contacts":
        return request(port, "POST", "/list-contacts", options.key, { limit: 50 })
      case "list-calls":
        return request(port, "POST", "/v3/list-calls", options.key, { limit: 50 })
      case "get-batch-call":
        return request(port, "GET", `/get-batch-call/${options.batchCallId}`, options.key)
      case "create-batch-call":
        return request(port, "POST", "/create-batch-call", options.key, {
          from_number: options.fromNumber,
          tasks: Array.from({ length: options.smallBatchTasks }, () => ({
            to_number: `+4430${String(numbers++).padStart(8, "0")}`
          }))
        })
    }
  }
  const client = async (first: number) => {
    for (let turn = first; !stopped; turn++) {
      const slot = options.slots[turn % options.slots.length]!
      const operation = pick()
      const generation = slot.generation
      const wasUp = slot.up
      let answer: Answer
      try {
        answer = await send(slot.port, operation)
      } catch (error) {
        if (!wasUp || slot.generation !== generation) {
          results.noAnswerWhileDown++
          // a client retrying a server that refuses connections backs off (the vendor's clients do), instead of
          // spinning on refusals while the machine's two cores start eight processes
          await new Promise((resolve) => setTimeout(resolve, 50))
        } else {
          unexpected(`${operation} on :${slot.port} (up, not killed meanwhile) got no answer: ${String(error)}`)
        }
        continue
      }
      results.answered++
      if (answer.status >= 200 && answer.status < 300) {
        results.served[operation]++
        if (operation === "create-batch-call") {
          results.createdBatches.push(String((JSON.parse(answer.body) as { batch_call_id: string }).batch_call_id))
        }
      } else if (answer.status === 503 && answer.retryAfter !== undefined) {
        results.unavailable++
      } else {
        unexpected(
          `${operation} on :${slot.port} answered ${answer.status} (Retry-After ${answer.retryAfter ?? "none"}, ` +
            `server ${wasUp ? "up" : "down"}): ${answer.body.slice(0, 300)}`
        )
      }
    }
  }
  const running = Array.from({ length: options.clients }, (_, i) => client(i))
  return {
    results,
    stop: async () => {
      stopped = true
      await Promise.all(running)
      return results
    }
  }
}
