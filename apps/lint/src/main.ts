/**
 * svc-lint's launch: the program (commands/Program.ts) on the Node runtime that `bin.ts` or the start-up snapshot
 * (`snapshot.ts`) hands in once the process runs. Composition only (dependency rule 6).
 */
import * as Program from "./commands/Program.ts"

export const main = (platform: Program.Platform): void => Program.run(platform)
