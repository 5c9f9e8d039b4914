import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Effect, Redacted } from "effect"
import * as BatchTestWorker from "../../src/batchTests/BatchTestWorker.ts"

// The batch-test settings of the environment (docs/operations.md, "Batch tests"; decision 0706).

const load = (env: Record<string, string>) =>
  BatchTestWorker.load.pipe(Effect.provide(ConfigProvider.layer(ConfigProvider.fromUnknown(env))))

describe("BatchTestWorker.load", () => {
  it.effect("no SVC_TEST_LLM_URL: simulations are not configured (their runs end error saying what to set)", () =>
    Effect.gen(function*() {
      assert.isUndefined((yield* load({})).llm)
      assert.isUndefined((yield* load({ SVC_TEST_LLM_URL: "" })).llm)
      assert.include(BatchTestWorker.simulationNotConfigured, "set SVC_TEST_LLM_URL")
    }))

  it.effect("SVC_TEST_LLM_URL with model, key and timeout", () =>
    Effect.gen(function*() {
      const settings = yield* load({
        SVC_TEST_LLM_URL: "https://llm.example.com/v1",
        SVC_TEST_LLM_MODEL: "gpt-4.1-mini",
        SVC_TEST_LLM_API_KEY: "sk-secret",
        SVC_TEST_LLM_TIMEOUT_MS: "5000"
      })
      assert.strictEqual(settings.llm?.url, "https://llm.example.com/v1")
      assert.strictEqual(settings.llm?.model, "gpt-4.1-mini")
      assert.strictEqual(Redacted.value(settings.llm!.apiKey!), "sk-secret")
      assert.strictEqual(settings.llm?.timeoutMs, 5000)
    }))

  it.effect("defaults: each definition's llm_model, no key, 60 s a call", () =>
    Effect.gen(function*() {
      const settings = yield* load({ SVC_TEST_LLM_URL: "http://127.0.0.1:11434/v1" })
      assert.deepStrictEqual(settings.llm, {
        url: "http://127.0.0.1:11434/v1",
        model: undefined,
        apiKey: undefined,
        timeoutMs: 60_000
      })
    }))
})
