/** The linter's version, from its package.json (SARIF `tool.driver.version`, `--version`). */
import manifest from "../../package.json" with { type: "json" }

export const VERSION: string = manifest.version

/** The exact versions of the parsers and libraries the linter runs on (part of the cache key). */
export const DEPENDENCIES: Readonly<Record<string, string>> = manifest.dependencies
