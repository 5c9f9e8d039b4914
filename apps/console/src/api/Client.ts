/**
 * The console's only way to svc: its public HTTP API, with the API key the user typed (docs/decisions/0800).
 *
 * - Every request carries `Authorization: Bearer <key>`; the key is never put in a URL or logged.
 * - An error answer is thrown as {@link ApiError} with the API's own message (`{"status":"error","message"}`).
 * - 401: the key is wrong or revoked; the client forgets it and tells the page, which shows the key prompt again.
 * - 429 and 503: the server asks the client to come back later (`Retry-After`, docs/api.md "Rate limits" and
 *   "Errors"); the client waits that long, says so through `onBackoff`, and tries again, at most
 *   {@link MAX_RETRIES} times before it gives up with the last answer's message.
 */

/** An answer of the API that is not a success, with the API's message. */
export class ApiError extends Error {
  readonly status: number
  constructor(status: number, message: string) {
    super(message)
    this.status = status
    this.name = "ApiError"
  }
}

/** What the user is told while the client waits before retrying a 429 or 503. */
export interface Backoff {
  readonly status: number
  readonly seconds: number
  readonly attempt: number
  readonly path: string
}

export interface ClientOptions {
  readonly key: () => string | undefined
  readonly onUnauthorized: (message: string) => void
  readonly onBackoff: (backoff: Backoff | undefined) => void
  readonly fetch?: typeof globalThis.fetch
  /** Waits `ms` (tests pass a recorder; the page uses setTimeout). */
  readonly sleep?: (ms: number) => Promise<void>
}

/** Retries of one request after 429/503 before the error is shown. */
export const MAX_RETRIES = 5

/** The longest wait between two retries, whatever the server asks: the page stays responsive. */
export const MAX_WAIT_SECONDS = 60

/**
 * Seconds to wait before retry `attempt` (1-based): the server's `Retry-After` (seconds, or an HTTP date, RFC 9110
 * §10.2.3) when it sent one, else 1, 2, 4... seconds; at least 1 and at most {@link MAX_WAIT_SECONDS}.
 */
export const retryAfterSeconds = (header: string | null, attempt: number, now: number): number => {
  const fallback = 2 ** (attempt - 1)
  let seconds = fallback
  if (header !== null && header.trim() !== "") {
    const text = header.trim()
    if (/^\d+$/.test(text)) seconds = Number(text)
    else {
      const at = Date.parse(text)
      if (!Number.isNaN(at)) seconds = Math.ceil((at - now) / 1000)
    }
  }
  return Math.min(MAX_WAIT_SECONDS, Math.max(1, seconds))
}

/** The message of an error answer: the API's `message`, else the status and the start of the body. */
export const errorMessage = (status: number, text: string): string => {
  try {
    const body: unknown = JSON.parse(text)
    if (typeof body === "object" && body !== null && "message" in body && typeof body.message === "string") {
      return body.message
    }
  } catch {
    // not JSON: a proxy's page, for example
  }
  return `HTTP ${status}${text.trim() === "" ? "" : `: ${text.trim().slice(0, 200)}`}`
}

export interface Client {
  readonly get: <A>(path: string, signal?: AbortSignal) => Promise<A>
  readonly post: <A>(path: string, body?: unknown, signal?: AbortSignal) => Promise<A>
}

export const makeClient = (options: ClientOptions): Client => {
  const doFetch = options.fetch ?? globalThis.fetch.bind(globalThis)
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)))

  const request = async <A>(method: string, path: string, body: unknown, signal?: AbortSignal): Promise<A> => {
    for (let attempt = 1;; attempt++) {
      const key = options.key()
      if (key === undefined) {
        options.onUnauthorized("enter an API key")
        throw new ApiError(401, "enter an API key")
      }
      const headers: Record<string, string> = { authorization: `Bearer ${key}` }
      if (body !== undefined) headers["content-type"] = "application/json"
      const response = await doFetch(path, {
        method,
        headers,
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        ...(signal === undefined ? {} : { signal }),
        // the key goes in a header only; no cookies are involved
        credentials: "omit",
        cache: "no-store"
      })
      if (response.ok) {
        options.onBackoff(undefined)
        return (response.status === 204 ? undefined : await response.json()) as A
      }
      const text = await response.text()
      const message = errorMessage(response.status, text)
      if ((response.status === 429 || response.status === 503) && attempt <= MAX_RETRIES) {
        const seconds = retryAfterSeconds(response.headers.get("retry-after"), attempt, Date.now())
        options.onBackoff({ status: response.status, seconds, attempt, path })
        await sleep(seconds * 1000)
        if (signal?.aborted === true) throw new ApiError(0, "cancelled")
        continue
      }
      options.onBackoff(undefined)
      if (response.status === 401) options.onUnauthorized(message)
      throw new ApiError(response.status, message)
    }
  }

  return {
    get: (path, signal) => request("GET", path, undefined, signal),
    post: (path, body, signal) => request("POST", path, body, signal)
  }
}
