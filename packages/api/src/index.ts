/**
 * The HTTP contract of svc (spec: voice-agent-api.md), shared by the server, its tests and clients.
 */
export * from "./Api.ts"
export * from "./Authorization.ts"
export * as ErrorBody from "./ErrorBody.ts"
export * as Errors from "./Errors.ts"
export * from "./InputRules.ts"
