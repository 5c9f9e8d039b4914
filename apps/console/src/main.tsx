/** The console's entry: styles, then the app into `#app` (apps/console/src/index.html). */
import "uplot/dist/uPlot.min.css"
import "./styles.css"
import { render } from "preact"
import { App } from "./ui/App.tsx"

const root = document.getElementById("app")
if (root !== null) render(<App />, root)
