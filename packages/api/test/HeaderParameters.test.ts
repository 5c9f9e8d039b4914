import { assert, describe, it } from "@effect/vitest"
import { OpenApi } from "effect/http-api"
import { Api } from "../src/Api.ts"

// docs/api.md, "Size and retries of create-batch-call": the handler reads Idempotency-Key (1 to 255 visible ASCII
// characters, `!` to `~`) and the vendor client's X-Stainless-Retry-Count; the contract names both (issue 29 item 4).
describe("create-batch-call's declared headers", () => {
  const operation = OpenApi.fromApi(Api).paths["/create-batch-call"]?.post
  const header = (name: string) =>
    operation?.parameters?.find((p: { readonly name: string; readonly in: string }) =>
      p.in === "header" && p.name.toLowerCase() === name.toLowerCase()
    ) as { readonly required: boolean; readonly schema: Record<string, unknown> } | undefined

  it("declares Idempotency-Key as optional, 1 to 255 characters from ! to ~", () => {
    const key = header("idempotency-key")
    assert.isDefined(key)
    assert.isFalse(key!.required)
    assert.strictEqual(key!.schema["minLength"], 1)
    assert.strictEqual(key!.schema["maxLength"], 255)
    const pattern = new RegExp(String(key!.schema["pattern"]))
    assert.isTrue(pattern.test("order-2026-12-05!~"))
    assert.isFalse(pattern.test("has space"))
    assert.isFalse(pattern.test("café"))
  })

  it("declares X-Stainless-Retry-Count as optional", () => {
    assert.isFalse(header("x-stainless-retry-count")!.required)
  })

  it("declares no header on an operation that reads none", () => {
    const list = OpenApi.fromApi(Api).paths["/list-contacts"]?.post
    assert.isFalse((list?.parameters ?? []).some((p: { readonly in: string }) => p.in === "header"))
  })
})
