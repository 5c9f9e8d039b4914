// A reference custom-LLM WebSocket server (issue 32 item 6): a small Node server that follows the protocol the
// platform speaks (../../../shared/reference/custom-llm-protocol.md, from the vendor's "LLM WebSocket" page and its
// Node demo), with a tool call and an end call, and no model: its replies are rules, so tests and the docs can rely
// on every word.
//
//   node examples/custom-llm/server.mjs [--port 8765] [--host 127.0.0.1]
//
// prints `listening on ws://HOST:PORT` once it accepts connections; connect to ws://HOST:PORT/{call_id}.
//
// What it says:
// - on connect: a `config` frame (asks for `call_details`), then the begin message (response_id 0):
//   "Hello, this is Acme support. How can I help?"
// - a caller turn that mentions an order: a `lookup_order` tool call with the order number said (digits, else
//   "unknown"), its result, then "Order #N has shipped." streamed in two frames;
// - a turn with "bye": "Goodbye!" with `end_call: true`;
// - any other turn: "You said: <text>. Anything else?" streamed word by word;
// - a `ping_pong` is echoed; a reply still streaming when a newer response_id arrives is abandoned (as the demos do).
import { WebSocketServer } from "ws"

const args = process.argv.slice(2)
const option = (name, fallback) => {
  const at = args.indexOf(`--${name}`)
  return at === -1 ? fallback : args[at + 1]
}
const port = Number(option("port", process.env.PORT ?? "8765"))
const host = option("host", "127.0.0.1")

/** The reply to the last thing the caller said, as frames to send for `responseId`. */
export const reply = (responseId, said) => {
  const text = said.toLowerCase()
  if (text.includes("order")) {
    const number = /\d+/.exec(said)?.[0] ?? "unknown"
    const toolCallId = `lookup_${responseId}`
    return [
      {
        response_type: "tool_call_invocation",
        tool_call_id: toolCallId,
        name: "lookup_order",
        arguments: JSON.stringify({ order_id: number })
      },
      {
        response_type: "tool_call_result",
        tool_call_id: toolCallId,
        content: JSON.stringify({ order_id: number, status: "shipped" })
      },
      { response_type: "response", response_id: responseId, content: `Order #${number} `, content_complete: false },
      { response_type: "response", response_id: responseId, content: "has shipped.", content_complete: true }
    ]
  }
  if (/\bbye\b/.test(text)) {
    return [{
      response_type: "response",
      response_id: responseId,
      content: "Goodbye!",
      content_complete: true,
      end_call: true
    }]
  }
  const words = `You said: ${said}. Anything else?`.split(" ")
  return words.map((word, i) => ({
    response_type: "response",
    response_id: responseId,
    content: i === 0 ? word : ` ${word}`,
    content_complete: i === words.length - 1
  }))
}

const server = new WebSocketServer({ port, host })
server.on("connection", (socket) => {
  let latest = 0
  const send = (frame) => socket.send(JSON.stringify(frame))
  send({ response_type: "config", config: { call_details: true, auto_reconnect: false } })
  send({
    response_type: "response",
    response_id: 0,
    content: "Hello, this is Acme support. How can I help?",
    content_complete: true
  })
  socket.on("message", (data, isBinary) => {
    if (isBinary) return socket.close(1007, "binary frame")
    let message
    try {
      message = JSON.parse(data.toString())
    } catch {
      return socket.close(1007, "not JSON")
    }
    switch (message.interaction_type) {
      case "ping_pong":
        return send({ response_type: "ping_pong", timestamp: message.timestamp })
      case "response_required":
      case "reminder_required": {
        latest = message.response_id
        const id = message.response_id
        const said = [...message.transcript].reverse().find((u) => u.role === "user")?.content ?? ""
        for (const frame of reply(id, said)) {
          // a newer response_id makes this reply obsolete: stop streaming it
          if (latest !== id) return
          send(frame)
        }
        return
      }
      default:
        // call_details and update_only need no answer
        return
    }
  })
})
server.on("listening", () => {
  const address = server.address()
  process.stdout.write(`listening on ws://${host}:${address.port}\n`)
})
const stop = () => server.close(() => process.exit(0))
process.on("SIGTERM", stop)
process.on("SIGINT", stop)
