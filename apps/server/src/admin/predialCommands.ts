/**
 * Admin subcommands for an org's pre-dial check (decision 0553), printing JSON on stdout; the logic lives in
 * `@svc/store/predial/PredialRepo.ts`, this file only wires flags to it.
 *
 * - `set-predial-webhook --org ID --url URL [--timeout-ms N]` -> `{"predial_webhook_url","timeout_ms"}`: from then
 *   on (within the workers' 5 s cache) every dial of the org's batch calls waits for the receiver's allow. The org
 *   needs a webhook secret (`create-webhook-secret`): checks are signed with it. Timeout 100-10,000 ms, default 3,000.
 * - `clear-predial-webhook --org ID` -> `{"cleared": true|false}` (false: it had none).
 */
import { Database } from "@svc/store"
import { PredialRepo, TIMEOUT_MS } from "@svc/store/predial/PredialRepo.ts"
import { Clock, Console, Effect, Layer } from "effect"
import { Command, Flag } from "effect/cli"
import { org } from "./IdFlags.ts"

const Store = PredialRepo.layer.pipe(Layer.provide(Database.layer))

const print = <A, E>(effect: Effect.Effect<A, E, PredialRepo>) =>
  effect.pipe(
    Effect.flatMap((result) => Console.log(JSON.stringify(result))),
    Effect.provide(Store)
  )

const setPredialWebhook = Command.make(
  "set-predial-webhook",
  {
    org,
    url: Flag.String("url").pipe(Flag.withDescription("http(s) URL asked before each dial of the org's batch calls")),
    timeoutMs: Flag.Int("timeout-ms").pipe(
      Flag.withDescription(
        `Milliseconds the receiver has to answer (${TIMEOUT_MS.min}-${TIMEOUT_MS.max}, default ${TIMEOUT_MS.default})`
      ),
      Flag.withDefault(TIMEOUT_MS.default)
    )
  },
  ({ org, timeoutMs, url }) =>
    print(Effect.gen(function*() {
      const repo = yield* PredialRepo
      return yield* repo.set(org, url, timeoutMs, yield* Clock.currentTimeMillis)
    }))
).pipe(
  Command.withDescription(
    "Ask the org's own system before each dial (signed like the call webhooks); prints {\"predial_webhook_url\",\"timeout_ms\"}"
  )
)

const clearPredialWebhook = Command.make(
  "clear-predial-webhook",
  { org },
  ({ org }) => print(Effect.map(Effect.flatMap(PredialRepo, (repo) => repo.clear(org)), (cleared) => ({ cleared })))
).pipe(Command.withDescription("Stop asking before each dial; prints {\"cleared\": true|false}"))

export const predialCommands = [setPredialWebhook, clearPredialWebhook] as const
