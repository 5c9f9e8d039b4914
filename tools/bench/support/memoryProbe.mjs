// Preloaded into a server under the memory bench (`node --import`): on SIGUSR2 the process writes its
// `process.memoryUsage()` as one JSON line to $SVC_BENCH_MEMORY_FILE, after a full GC when a file of that name plus
// `.gc` exists at that moment and the process runs with --expose-gc. The product has no such hook; the bench needs the heap
// figures of the baseline build too, so the probe is injected from outside.
import * as fs from "node:fs"
import * as v8 from "node:v8"

const file = process.env["SVC_BENCH_MEMORY_FILE"]
if (file !== undefined) {
  process.on("SIGUSR2", () => {
    const forced = fs.existsSync(`${file}.gc`) && typeof globalThis.gc === "function"
    if (forced) globalThis.gc()
    const heap = v8.getHeapStatistics()
    fs.appendFileSync(
      file,
      JSON.stringify({
        ...process.memoryUsage(),
        heapPhysical: heap.total_physical_size,
        malloced: heap.malloced_memory,
        forcedGc: forced
      }) + "\n"
    )
  })
}
