/**
 * The console's frame: the API-key prompt until a key is given, then the navigation, a status line that says when
 * the API asked us to wait (429/503), and the page of the current route.
 */
import { useEffect, useMemo, useState } from "preact/hooks"
import { type Backoff, makeClient } from "../api/Client.ts"
import { forgetKey, readKey, saveKey } from "../api/KeyStore.ts"
import { BatchPage } from "../pages/Batch.tsx"
import { BatchesPage } from "../pages/Batches.tsx"
import { CallPage } from "../pages/Call.tsx"
import { CallsPage } from "../pages/Calls.tsx"
import { ContactPage } from "../pages/Contact.tsx"
import { ContactsPage } from "../pages/Contacts.tsx"
import { TestJobPage } from "../pages/TestJob.tsx"
import { TestsPage } from "../pages/Tests.tsx"
import { WebhooksPage } from "../pages/Webhooks.tsx"
import { href, parseRoute, type Route } from "../Router.ts"
import { ClientContext } from "./ClientContext.ts"

const useRoute = (): Route => {
  const [route, setRoute] = useState(() => parseRoute(location.hash))
  useEffect(() => {
    const onChange = () => setRoute(parseRoute(location.hash))
    addEventListener("hashchange", onChange)
    return () => removeEventListener("hashchange", onChange)
  }, [])
  return route
}

const KeyPrompt = (props: { readonly reason: string | undefined; readonly onKey: (key: string) => void }) => {
  const [value, setValue] = useState("")
  return (
    <main id="main" class="key-prompt">
      <h1>svc console</h1>
      <form
        onSubmit={(event) => {
          event.preventDefault()
          if (value.trim() !== "") props.onKey(value.trim())
        }}
      >
        <p>
          Enter an API key of your organisation. It is kept in this tab only (session storage) and sent to the svc API
          in the Authorization header.
        </p>
        {props.reason === undefined ? null : <p class="error" role="alert">{props.reason}</p>}
        <label for="api-key">API key</label>
        <input
          id="api-key"
          name="api-key"
          type="password"
          autocomplete="off"
          spellcheck={false}
          required
          value={value}
          onInput={(event) => setValue(event.currentTarget.value)}
        />
        <button type="submit">Open the console</button>
      </form>
    </main>
  )
}

const NAV: ReadonlyArray<readonly [string, string, ReadonlyArray<Route["page"]>]> = [
  ["Batches", href.batches(), ["batches", "batch"]],
  ["Calls", href.calls(), ["calls", "call"]],
  ["Contacts", href.contacts(), ["contacts", "contact"]],
  ["Webhooks", href.webhooks(), ["webhooks"]],
  ["Tests", href.tests(), ["tests", "test"]]
]

// each record page is keyed by its id: going from one batch to another starts a new page (its own samples, polls)
const Page = (props: { readonly route: Route }) => {
  const route = props.route
  switch (route.page) {
    case "batches":
      return <BatchesPage />
    case "batch":
      return <BatchPage key={route.id} id={route.id} />
    case "calls":
      return <CallsPage {...(route.batchCallId === undefined ? {} : { batchCallId: route.batchCallId })} />
    case "call":
      return <CallPage key={route.id} id={route.id} />
    case "contacts":
      return <ContactsPage />
    case "contact":
      return <ContactPage key={route.id} id={route.id} />
    case "webhooks":
      return <WebhooksPage {...(route.callId === undefined ? {} : { callId: route.callId })} />
    case "tests":
      return <TestsPage />
    case "test":
      return <TestJobPage key={route.id} id={route.id} />
  }
}

export const App = () => {
  const route = useRoute()
  const [key, setKey] = useState<string | undefined>(() => readKey())
  const [reason, setReason] = useState<string | undefined>(undefined)
  const [backoff, setBackoff] = useState<Backoff | undefined>(undefined)
  const client = useMemo(
    () =>
      makeClient({
        key: readKey,
        onUnauthorized: (message) => {
          forgetKey()
          setReason(message)
          setKey(undefined)
        },
        onBackoff: setBackoff
      }),
    []
  )
  useEffect(() => {
    document.title = `svc console · ${route.page}`
  }, [route.page])

  if (key === undefined) {
    return (
      <KeyPrompt
        reason={reason}
        onKey={(k) => {
          saveKey(k)
          setReason(undefined)
          setKey(k)
        }}
      />
    )
  }
  return (
    <ClientContext.Provider value={client}>
      <a class="skip" href="#main" onClick={(e) => (e.preventDefault(), document.getElementById("main")?.focus())}>
        Skip to content
      </a>
      <header class="top">
        <span class="brand">svc console</span>
        <nav aria-label="Sections">
          <ul>
            {NAV.map(([label, link, pages]) => (
              <li key={label}>
                <a href={link} aria-current={pages.includes(route.page) ? "page" : undefined}>{label}</a>
              </li>
            ))}
          </ul>
        </nav>
        <button
          type="button"
          class="secondary"
          onClick={() => {
            forgetKey()
            setReason(undefined)
            setKey(undefined)
          }}
        >
          Forget key
        </button>
      </header>
      <div class="status" role="status" aria-live="polite">
        {backoff === undefined
          ? null
          : `The API answered ${backoff.status} (${
            backoff.status === 429 ? "rate limited" : "busy"
          }): retrying in ${backoff.seconds} s (attempt ${backoff.attempt}).`}
      </div>
      <main id="main" tabIndex={-1}>
        <Page route={route} />
      </main>
    </ClientContext.Provider>
  )
}
