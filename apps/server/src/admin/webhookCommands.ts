/**
 * Admin subcommands for webhooks (decisions 0521, 0522), printing JSON on stdout; the logic lives in
 * `@svc/store/WebhooksRepo.ts`, this file only wires flags to it.
 *
 * - `create-webhook-secret --org ID [--grace-hours N]` -> `{"webhook_secret"}`: shown once. The org's first secret
 *   signs at once; a new one replaces the previous after the grace period (default 24 h), during which the previous
 *   still signs `x-svc-signature` and the new one signs `x-svc-signature-next` (docs/decisions/0521).
 * - `set-webhook --org ID --url URL [--events call_started,call_ended]` -> `{"webhook_url","webhook_events"}`.
 * - `webhook-deliveries --org ID [--call ID] [--limit N]`: the newest events with attempts, statuses, next retry.
 */
import { Database } from "@svc/store"
import { WebhooksRepo } from "@svc/store/webhooks/WebhooksRepo.ts"
import { Clock, Console, Effect, Layer, Option } from "effect"
import { Command, Flag } from "effect/cli"
import { call, org } from "./IdFlags.ts"

const Store = WebhooksRepo.layer.pipe(Layer.provide(Database.layer))

const print = <A, E>(effect: Effect.Effect<A, E, WebhooksRepo>, pretty = false) =>
  effect.pipe(
    Effect.flatMap((result) => Console.log(pretty ? JSON.stringify(result, null, 2) : JSON.stringify(result))),
    Effect.provide(Store)
  )

const createWebhookSecret = Command.make(
  "create-webhook-secret",
  {
    org,
    graceHours: Flag.Finite("grace-hours").pipe(
      Flag.withDescription("Hours the previous secret keeps signing x-svc-signature (default 24)"),
      Flag.withDefault(24)
    )
  },
  ({ graceHours, org }) =>
    !(graceHours >= 0)
      ? Effect.fail(new Error("--grace-hours must be 0 or more"))
      : print(Effect.gen(function*() {
        const repo = yield* WebhooksRepo
        const now = yield* Clock.currentTimeMillis
        return { webhook_secret: yield* repo.createSecret(org, Math.round(graceHours * 3_600_000), now) }
      }))
).pipe(Command.withDescription("Create the org's webhook signing secret (shown once); prints {\"webhook_secret\"}"))

const setWebhook = Command.make(
  "set-webhook",
  {
    org,
    url: Flag.String("url").pipe(Flag.withDescription("http(s) URL that receives the org's events")),
    events: Flag.String("events").pipe(
      Flag.withDescription("Comma-separated events (call_started, call_ended, call_analyzed); default all three"),
      Flag.optional
    )
  },
  ({ events, org, url }) =>
    print(Effect.gen(function*() {
      const repo = yield* WebhooksRepo
      const list = Option.map(events, (text) => text.split(",").map((e) => e.trim()).filter((e) => e !== ""))
      return yield* repo.setOrgWebhook(org, url, Option.getOrUndefined(list), yield* Clock.currentTimeMillis)
    }))
).pipe(Command.withDescription("Set the org's default webhook; prints {\"webhook_url\",\"webhook_events\"}"))

const webhookDeliveries = Command.make(
  "webhook-deliveries",
  {
    org,
    call: call.pipe(Flag.optional),
    limit: Flag.Int("limit").pipe(Flag.withDescription("Newest events shown"), Flag.withDefault(100))
  },
  ({ call, limit, org }) =>
    limit < 1
      ? Effect.fail(new Error("--limit must be at least 1"))
      : print(
        Effect.gen(function*() {
          const repo = yield* WebhooksRepo
          return { deliveries: yield* repo.deliveries(org, Option.getOrUndefined(call), limit) }
        }),
        true
      )
).pipe(Command.withDescription("The org's newest webhook events: state, attempts, last status, next retry (JSON)"))

export const webhookCommands = [createWebhookSecret, setWebhook, webhookDeliveries] as const
