/**
 * One call (GET /v2/get-call): its status and how it got there, why it ended, the transcript and analysis when it has
 * them, its metadata, and the webhook deliveries of its events with every attempt (POST /list-webhook-deliveries with
 * `filter_criteria.call_id`).
 */
import { useEffect, useState } from "preact/hooks"
import type { Call, Page, WebhookDelivery } from "../api/Types.ts"
import { dateTime, duration, isoTime } from "../Format.ts"
import { href } from "../Router.ts"
import { useClient } from "../ui/ClientContext.ts"
import { ErrorNote, Fields, Json, useNow } from "../ui/Common.tsx"
import { DeliveryCard } from "./Deliveries.tsx"

interface HistoryEntry {
  readonly at: number
  readonly what: string
}

/** The call's changes as far as the API shows them: its timestamps and its events' deliveries. */
export const statusHistory = (call: Call, deliveries: ReadonlyArray<WebhookDelivery>): ReadonlyArray<HistoryEntry> => {
  const entries: Array<HistoryEntry> = []
  if (call.start_timestamp !== undefined) {
    entries.push({
      at: call.start_timestamp,
      what: call.call_status === "registered" ? "registered (dialling)" : "started"
    })
  }
  if (call.end_timestamp !== undefined) {
    entries.push({
      at: call.end_timestamp,
      what: `${call.call_status}${call.disconnection_reason === undefined ? "" : ` (${call.disconnection_reason})`}`
    })
  }
  for (const d of deliveries) {
    const first = d.attempts[0]
    if (first !== undefined) entries.push({ at: first.attempted_timestamp, what: `${d.event} event sent` })
  }
  return entries.sort((a, b) => a.at - b.at)
}

export const CallPage = (props: { readonly id: string }) => {
  const client = useClient()
  const now = useNow(5000)
  const [call, setCall] = useState<Call | undefined>(undefined)
  const [deliveries, setDeliveries] = useState<ReadonlyArray<WebhookDelivery>>([])
  const [error, setError] = useState<string | undefined>(undefined)
  const [deliveryError, setDeliveryError] = useState<string | undefined>(undefined)
  useEffect(() => {
    const controller = new AbortController()
    client.get<Call>(`/v2/get-call/${encodeURIComponent(props.id)}`, controller.signal).then(
      setCall,
      (e: Error) => setError(e.message)
    )
    client.post<Page<WebhookDelivery>>(
      "/list-webhook-deliveries",
      { limit: 100, filter_criteria: { call_id: { type: "enum", op: "in", value: [props.id] } } },
      controller.signal
    ).then((page) => setDeliveries(page.items), (e: Error) => setDeliveryError(e.message))
    return () => controller.abort()
  }, [props.id])
  if (call === undefined) {
    return (
      <section>
        <h1>Call {props.id}</h1>
        {error === undefined ? <p>Loading…</p> : <ErrorNote error={error} />}
      </section>
    )
  }
  const analysis = call.call_analysis
  return (
    <section aria-labelledby="call-title">
      <p class="crumbs">
        <a href={href.calls()}>Calls</a> /
      </p>
      <h1 id="call-title">Call {call.call_id}</h1>
      <Fields
        rows={[
          ["Status", <span class={`badge ${call.call_status}`}>{call.call_status}</span>],
          ["Disconnection reason", call.disconnection_reason ?? "—"],
          ["From", call.from_number ?? "—"],
          ["To", call.to_number ?? "—"],
          ["Agent", call.agent_id ?? "—"],
          ["Started", <time dateTime={isoTime(call.start_timestamp)}>{dateTime(call.start_timestamp)}</time>],
          ["Ended", <time dateTime={isoTime(call.end_timestamp)}>{dateTime(call.end_timestamp)}</time>],
          ["Length", call.duration_ms === undefined ? "—" : duration(call.duration_ms)],
          [
            "Batch",
            call.batch_call_id === undefined ? "—" : <a href={href.batch(call.batch_call_id)}>{call.batch_call_id}</a>
          ],
          ...(call.opt_out === true ? [["Opted out", "yes"] as const] : [])
        ]}
      />
      <section aria-labelledby="history-title" class="panel">
        <h2 id="history-title">Status history</h2>
        <ol class="history">
          {statusHistory(call, deliveries).map((h, i) => (
            <li key={i}>
              <time dateTime={isoTime(h.at)}>{dateTime(h.at)}</time> {h.what}
            </li>
          ))}
        </ol>
      </section>
      <section aria-labelledby="transcript-title" class="panel">
        <h2 id="transcript-title">Transcript</h2>
        {call.transcript_object !== undefined && call.transcript_object.length > 0
          ? (
            <ol class="transcript">
              {call.transcript_object.map((turn, i) => (
                <li key={i} class={turn.role}>
                  <strong>{turn.role}:</strong> {turn.content}
                </li>
              ))}
            </ol>
          )
          : call.transcript !== undefined && call.transcript !== ""
          ? <pre class="transcript-text">{call.transcript}</pre>
          : <p>No transcript.</p>}
      </section>
      <section aria-labelledby="analysis-title" class="panel">
        <h2 id="analysis-title">Analysis</h2>
        {analysis === undefined ? <p>No analysis yet.</p> : <Json value={analysis} label="Call analysis" />}
      </section>
      <section aria-labelledby="metadata-title" class="panel">
        <h2 id="metadata-title">Metadata</h2>
        {call.metadata === undefined ? <p>None.</p> : <Json value={call.metadata} label="Call metadata" />}
      </section>
      <section aria-labelledby="deliveries-title" class="panel">
        <h2 id="deliveries-title">Webhook deliveries</h2>
        <ErrorNote error={deliveryError} />
        {deliveries.length === 0 && deliveryError === undefined ? <p>No webhook event for this call.</p> : null}
        {deliveries.map((d) => <DeliveryCard key={d.event_id} delivery={d} now={now} showCall={false} />)}
      </section>
    </section>
  )
}
