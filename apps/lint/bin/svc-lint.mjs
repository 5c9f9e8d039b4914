#!/usr/bin/env node
// npm links this file as the `svc-lint` bin; Node >= 22.18 runs the TypeScript sources directly.
import "../src/bin.ts"
