// svc-scheduler: the background worker on its own (production: N replicas on one PostgreSQL).
import { Logging, Main } from "@svc/runtime"
import { Database } from "@svc/store"
import { Layer } from "effect"
import * as Scheduler from "./runtime/Scheduler.ts"

Main.launch(
  "svc-scheduler",
  Scheduler.layer.pipe(Layer.provideMerge(Database.layerSupervised), Layer.provide(Logging.layer)),
  Database.supervisionFailed
)
