import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Logger } from "effect"
import * as Scheduler from "../src/Scheduler.ts"

describe("Scheduler", () => {
  it.effect("announces start when its layer is built and stop when its scope closes", () =>
    Effect.gen(function*() {
      const lines: Array<unknown> = []
      const capture = Logger.layer([Logger.make(({ message }) => lines.push(message))])
      yield* Effect.scoped(Layer.build(Scheduler.layer.pipe(Layer.provide(capture))))
      assert.deepStrictEqual(lines.flat(), ["svc-scheduler started (no jobs registered yet)", "svc-scheduler stopped"])
    }))
})
