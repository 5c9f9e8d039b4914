/**
 * Requests Node's HTTP parser refuses before any route sees them (decision 0106): raw bytes that are not a valid
 * request line (a non-ASCII byte in the target), a broken chunked encoding, a bad or duplicate `Content-Length`,
 * headers over Node's size limit, a request that did not arrive in time. Node answers them itself with a bare
 * `400 Bad Request` (no body, no request id); this `clientError` handler answers them in the API's error shape,
 * `{"status":"error","message":...}` with `Content-Type: application/json` and an `x-request-id`, the message saying
 * what was wrong, and closes the connection (the parser cannot find the next request on it).
 *
 * Statuses: 400 for every framing error, headers over the limit included (the spec lists 400 for a bad request and
 * neither 413 nor 431, as for a body over its limit: decision 0012); 408 for a request that did not arrive in time
 * (Node's `headersTimeout`/`requestTimeout`: the client was too slow, and the vendor's client retries a 408).
 *
 * Where Node does not let us answer (docs/api.md, Errors): the connection was reset or is no longer writable, or the
 * error came after the response to a request on the connection had begun (a pipelined request, or a chunked body
 * broken after the handler answered): then the connection is only closed, as Node does.
 */
import * as ErrorBody from "@svc/api/ErrorBody.ts"
import * as crypto from "node:crypto"
import * as http from "node:http"
import type * as stream from "node:stream"

/** What Node tells about a refused request (`err.code` is llhttp's error name, `err.reason` its explanation). */
export interface ClientError {
  readonly code?: string | undefined
  readonly reason?: string | undefined
  readonly message?: string | undefined
}

/** An answer to a refused request. */
export interface Refusal {
  readonly status: 400 | 408
  readonly message: string
}

const CHUNKED = "the chunked request body is malformed"

/**
 * The answer to a request Node's parser refused, by llhttp's error code (llhttp's own explanation where no sentence
 * of ours fits).
 *
 * @category encoding
 */
export const refusalOf = (error: ClientError): Refusal => {
  const why = error.reason ?? error.message ?? error.code ?? "unknown error"
  switch (error.code) {
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return {
        status: 408,
        message: "the request did not arrive in time (the HTTP server's headersTimeout or requestTimeout passed); " +
          "send it again"
      }
    case "HPE_HEADER_OVERFLOW":
      return {
        status: 400,
        message: `the request's headers are larger than the ${http.maxHeaderSize} bytes svc-server accepts ` +
          "(Node's --max-http-header-size)"
      }
    case "HPE_CHUNK_EXTENSIONS_OVERFLOW":
      return { status: 400, message: `${CHUNKED}: its chunk extensions are too large` }
    case "HPE_INVALID_METHOD":
      return { status: 400, message: "the request method is not valid HTTP (the request line is malformed)" }
    case "HPE_INVALID_URL":
      return {
        status: 400,
        message: "the request target is not valid HTTP: send the path and query percent-encoded (RFC 3986), " +
          "without spaces, control characters or raw bytes outside ASCII"
      }
    case "HPE_INVALID_VERSION":
      return { status: 400, message: "the HTTP version in the request line is not valid: send HTTP/1.1" }
    case "HPE_INVALID_HEADER_TOKEN":
      return {
        status: 400,
        message: `a request header is not valid HTTP: its name or value holds a character HTTP does not allow (${why})`
      }
    case "HPE_INVALID_CONTENT_LENGTH":
      return { status: 400, message: `Content-Length is not valid: send one decimal number of bytes (${why})` }
    case "HPE_UNEXPECTED_CONTENT_LENGTH":
      return {
        status: 400,
        message: "Content-Length and Transfer-Encoding: chunked were both sent; send one of them (RFC 9112 §6.3)"
      }
    case "HPE_INVALID_TRANSFER_ENCODING":
      return {
        status: 400,
        message: `Transfer-Encoding is not valid (${why}): send Transfer-Encoding: chunked alone, without ` +
          "Content-Length (RFC 9112 §6.3)"
      }
    case "HPE_INVALID_CHUNK_SIZE":
    case "HPE_INVALID_EOF_STATE":
      return { status: 400, message: `${CHUNKED} (${why})` }
    default:
      return { status: 400, message: `the request is not valid HTTP/1.1 (${why})` }
  }
}

/** The raw HTTP response of a refusal, with its request id. */
export const responseText = (refusal: Refusal, requestId: string): string => {
  const body = JSON.stringify(ErrorBody.make(refusal.message))
  return `HTTP/1.1 ${refusal.status} ${http.STATUS_CODES[refusal.status]}\r\n` +
    "Content-Type: application/json\r\n" +
    `Content-Length: ${Buffer.byteLength(body)}\r\n` +
    `x-request-id: ${requestId}\r\n` +
    "Connection: close\r\n" +
    "\r\n" +
    body
}

/** What the handler did with a refused request, for the log. */
export interface Refused extends Refusal {
  readonly requestId: string
  readonly code: string | undefined
}

/**
 * The `clientError` listener: answers in the error shape where the connection allows it, then closes it.
 *
 * @category constructors
 */
export const handler =
  (onRefused: (refused: Refused) => void = () => {}) => (error: Error & ClientError, socket: stream.Duplex): void => {
    // a response already begun on this connection (Node's own rule): writing now would corrupt it
    const inFlight = (socket as { readonly _httpMessage?: { readonly headersSent?: boolean } })._httpMessage
    if (error.code === "ECONNRESET" || !socket.writable || inFlight?.headersSent === true) {
      socket.destroy()
      return
    }
    const refusal = refusalOf(error)
    const requestId = crypto.randomUUID()
    onRefused({ ...refusal, requestId, code: error.code })
    socket.end(responseText(refusal, requestId), () => socket.destroy())
  }

/**
 * `server` answering the requests its parser refuses in the error shape ({@link handler}).
 *
 * @category constructors
 */
export const attach = <S extends http.Server>(server: S, onRefused?: (refused: Refused) => void): S => {
  server.on("clientError", handler(onRefused))
  return server
}
