#!/usr/bin/env node
// npm links this file as the `svc-scheduler` bin; Node >= 22.18 runs the TypeScript sources directly.
import "../src/main.ts"
