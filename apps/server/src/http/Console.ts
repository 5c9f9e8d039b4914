/**
 * `GET /console`: the svc console (docs/decisions/0800), a single page that talks to this server's public
 * API with the user's API key. Served like /docs: no API key to load the page (the page asks for one and sends it
 * only to the API), from files built from the repository (ConsoleAssets.ts), never from a CDN.
 *
 * Headers: a Content-Security-Policy that lets the page load only its own script and style and talk only to this
 * origin; no referrer (the URL's fragment holds ids); `no-cache` so a rebuilt console is picked up at once.
 */
import * as ErrorBody from "@svc/api/ErrorBody.ts"
import { Effect, Layer } from "effect"
import { HttpRouter, HttpServerResponse } from "effect/http"
import { type FileName, FILES, makeLoader } from "./ConsoleAssets.ts"

const SECURITY_HEADERS = {
  "content-security-policy": "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; " +
    "img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  "referrer-policy": "no-referrer",
  "x-content-type-options": "nosniff",
  "cache-control": "no-cache"
}

/** @category layers */
export const layer = Layer.unwrap(Effect.sync(() => {
  const load = makeLoader()
  const serve = (name: FileName) =>
    Effect.promise(() => load().then((assets) => ({ assets }), (error: Error) => ({ error }))).pipe(
      Effect.map((result) =>
        "error" in result
          ? HttpServerResponse.jsonUnsafe(
            ErrorBody.make(`the console is not available: ${result.error.message}; run npm run build -w @svc/console`),
            { status: 503, headers: { "retry-after": "5" } }
          )
          : HttpServerResponse.uint8Array(result.assets[name], { contentType: FILES[name], headers: SECURITY_HEADERS })
      )
    )
  return Layer.mergeAll(
    HttpRouter.add("GET", "/console", serve("index.html")),
    HttpRouter.add("GET", "/console/console.js", serve("console.js")),
    HttpRouter.add("GET", "/console/console.css", serve("console.css"))
  )
}))
