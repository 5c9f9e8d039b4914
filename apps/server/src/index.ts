/** svc-server as a library, for the all-in-one `npm start` composition (tools/start). */
export * as Server from "./runtime/Server.ts"
