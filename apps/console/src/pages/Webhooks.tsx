/**
 * The org's webhook deliveries (POST /list-webhook-deliveries, an svc extension): failing ones first (given up, gone,
 * or waiting to be retried after a failed attempt), then the rest, newest first; each with its attempts and, while it
 * is retried, the time of the next attempt.
 */
import { useState } from "preact/hooks"
import type { Page, WebhookDelivery } from "../api/Types.ts"
import { relative } from "../Format.ts"
import { href } from "../Router.ts"
import { useClient } from "../ui/ClientContext.ts"
import { ErrorNote, useNow } from "../ui/Common.tsx"
import { usePaged } from "../ui/Paged.ts"
import { type Column, VirtualTable } from "../ui/VirtualTable.tsx"
import { DeliveryCard } from "./Deliveries.tsx"

const STATES = ["", "pending", "delivered", "gone", "failed"] as const

export const WebhooksPage = (props: { readonly callId?: string }) => {
  const client = useClient()
  const now = useNow(5000)
  const [state, setState] = useState("")
  const [callId, setCallId] = useState(props.callId ?? "")
  const [applied, setApplied] = useState({ state: "", callId: props.callId ?? "" })
  const [selected, setSelected] = useState<WebhookDelivery | undefined>(undefined)
  const list = usePaged(
    (key) => {
      const criteria = {
        ...(applied.state === "" ? {} : { state: { type: "enum", op: "in", value: [applied.state] } }),
        ...(applied.callId === "" ? {} : { call_id: { type: "enum", op: "in", value: [applied.callId] } })
      }
      return client.post<Page<WebhookDelivery>>("/list-webhook-deliveries", {
        limit: 100,
        ...(key === undefined ? {} : { pagination_key: key }),
        ...(Object.keys(criteria).length === 0 ? {} : { filter_criteria: criteria })
      })
    },
    [applied]
  )
  const columns: ReadonlyArray<Column<WebhookDelivery>> = [
    {
      header: "State",
      width: "minmax(6rem, 0.8fr)",
      render: (d) => (
        <span class={`badge ${d.state}${d.failing ? " failing" : ""}`}>
          {d.failing && d.state === "pending" ? "retrying" : d.state}
        </span>
      )
    },
    { header: "Event", width: "minmax(7rem, 1fr)", render: (d) => d.event },
    {
      header: "Call",
      width: "minmax(9rem, 1.6fr)",
      optional: true,
      render: (d) => <a href={href.call(d.call_id)}>{d.call_id}</a>
    },
    { header: "Attempts", width: "minmax(4rem, 0.6fr)", optional: true, render: (d) => String(d.attempt_count) },
    {
      header: "Last answer",
      width: "minmax(7rem, 1.4fr)",
      optional: true,
      render: (d) => d.last_status_code === null ? d.last_error ?? "" : `HTTP ${d.last_status_code}`
    },
    {
      header: "Next retry",
      width: "minmax(6rem, 1fr)",
      optional: true,
      render: (d) => d.next_retry_timestamp === null ? "" : relative(d.next_retry_timestamp, now)
    },
    {
      header: "Details",
      width: "minmax(5rem, 0.8fr)",
      render: (d) => (
        <button
          type="button"
          class="link"
          onClick={() => setSelected(d)}
          aria-label={`Attempts of ${d.event} for ${d.call_id}`}
        >
          Attempts
        </button>
      )
    }
  ]
  return (
    <section aria-labelledby="webhooks-title">
      <h1 id="webhooks-title">Webhook deliveries</h1>
      <form
        class="filters"
        aria-label="Filter deliveries"
        onSubmit={(e) => {
          e.preventDefault()
          setApplied({ state, callId: callId.trim() })
        }}
      >
        <label for="delivery-state">State</label>
        <select id="delivery-state" value={state} onChange={(e) => setState(e.currentTarget.value)}>
          {STATES.map((s) => <option value={s} key={s}>{s === "" ? "any" : s}</option>)}
        </select>
        <label for="delivery-call">Call id</label>
        <input id="delivery-call" value={callId} onInput={(e) => setCallId(e.currentTarget.value)} />
        <button type="submit">Apply</button>
      </form>
      <ErrorNote error={list.error} />
      <VirtualTable
        label="Webhook deliveries, failing first"
        columns={columns}
        rows={list.rows}
        rowKey={(d) => d.event_id}
        hasMore={list.hasMore}
        loading={list.loading}
        loadMore={list.loadMore}
        empty="No webhook deliveries."
      />
      {selected === undefined ? null : (
        <section aria-label="Selected delivery" class="panel">
          <DeliveryCard delivery={selected} now={now} showCall={true} />
        </section>
      )}
    </section>
  )
}
