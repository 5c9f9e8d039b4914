import { assert, describe, it } from "@effect/vitest"
import * as Domain from "../src/index.ts"

describe("@svc/domain entry", () => {
  it("re-exports every concept without name clashes", () => {
    assert.isFunction(Domain.CallWindow.isOpen)
    assert.isFunction(Domain.DeprecationEngine.checkConfig)
    assert.isFunction(Domain.DeprecationEndpoints.checkEndpoint)
    assert.isFunction(Domain.formatDecodeError)
    assert.isDefined(Domain.CreateBatchCallRequest)
    assert.isDefined(Domain.ListContactsBody)
  })
})
