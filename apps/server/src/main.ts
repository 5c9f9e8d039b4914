// svc-server: the HTTP API on its own (production: N stateless replicas on one PostgreSQL).
import { Logging, Main } from "@svc/runtime"
import { Database } from "@svc/store"
import { Layer } from "effect"
import * as Server from "./runtime/Server.ts"

Main.launch(
  "svc-server",
  Server.layer.pipe(Layer.provideMerge(Database.layerSupervised), Layer.provide(Logging.layer)),
  Database.supervisionFailed
)
