#!/usr/bin/env node
// npm links this file as the `svc-test` bin (issue 32 item 5): the TypeScript sources, run by Node's type stripping.
import * as path from "node:path"

const here = path.dirname(new URL(import.meta.url).pathname)
await import(path.join(here, "..", "src", "svcTest", "main.ts"))
