/** The `svc-test` entry: runs the command and exits with its code (docs/testing-agents.md). */
import { Effect } from "effect"
import * as SvcTest from "./SvcTest.ts"

const { code, err, out } = await Effect.runPromise(SvcTest.run(process.argv.slice(2)))
process.stdout.write(out)
process.stderr.write(err)
process.exitCode = code
