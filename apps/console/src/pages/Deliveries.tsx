/** Webhook deliveries and each attempt (POST /list-webhook-deliveries, an svc extension: docs/api.md). */
import type { WebhookDelivery } from "../api/Types.ts"
import { dateTime, isoTime, relative } from "../Format.ts"
import { href } from "../Router.ts"

export const Attempts = (props: { readonly delivery: WebhookDelivery }) =>
  props.delivery.attempts.length === 0 ? <p>No attempt yet.</p> : (
    <table class="plain attempts">
      <caption>
        Attempts of {props.delivery.event} ({props.delivery.attempt_count} in all
        {props.delivery.attempt_count > props.delivery.attempts.length
          ? `, the last ${props.delivery.attempts.length} kept`
          : ""})
      </caption>
      <thead>
        <tr>
          <th scope="col">At</th>
          <th scope="col">Answer</th>
          <th scope="col">Took</th>
        </tr>
      </thead>
      <tbody>
        {props.delivery.attempts.map((a, i) => (
          <tr key={i}>
            <td>
              <time dateTime={isoTime(a.attempted_timestamp)}>{dateTime(a.attempted_timestamp)}</time>
            </td>
            <td>
              {a.status_code === null
                ? a.error ?? "no answer"
                : `HTTP ${a.status_code}${a.error === null ? "" : `: ${a.error}`}`}
            </td>
            <td>{a.duration_ms} ms</td>
          </tr>
        ))}
      </tbody>
    </table>
  )

export const DeliveryCard = (
  props: { readonly delivery: WebhookDelivery; readonly now: number; readonly showCall: boolean }
) => {
  const d = props.delivery
  return (
    <article class={`delivery ${d.failing ? "failing" : ""}`} aria-labelledby={`d-${d.event_id}`}>
      <h3 id={`d-${d.event_id}`}>
        <span class={`badge ${d.state}`}>{d.state}</span> {d.event}
        {props.showCall
          ? (
            <>
              · <a href={href.call(d.call_id)}>{d.call_id}</a>
            </>
          )
          : null}
      </h3>
      <p class="note">
        To {d.url}
        {d.next_retry_timestamp === null ? null : (
          <>
            {" "}· next attempt{" "}
            <time dateTime={isoTime(d.next_retry_timestamp)}>{relative(d.next_retry_timestamp, props.now)}</time>
          </>
        )}
        {d.finished_timestamp === null ? null : <>· finished {dateTime(d.finished_timestamp)}</>}
      </p>
      <Attempts delivery={d} />
    </article>
  )
}
