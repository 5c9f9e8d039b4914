/** Process plumbing shared by the apps: structured logging and the main entry. */
export * as JsonParseCheck from "./JsonParseCheck.ts"
export * as Logging from "./Logging.ts"
export * as Main from "./Main.ts"
