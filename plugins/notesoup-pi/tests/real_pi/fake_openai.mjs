// A fake OpenAI-compatible chat completions endpoint on 127.0.0.1 for the
// terminal test: the real `pi` command talks to it through models.json.
//
// usage: node fake_openai.mjs SCRIPT.json PORT_FILE REQUESTS.jsonl
// SCRIPT.json is a list of replies, served in order, one per request:
//   {"text": "..."} or {"tools": [{"name": "...", "args": {...}}], "text"?: "..."}
//   or {"hang": true}: the request is never answered (a stalled provider).
// Every request body is appended to REQUESTS.jsonl; the chosen port is
// written to PORT_FILE once listening. Replies stream as server-sent events.

import fs from "node:fs";
import http from "node:http";

const [scriptFile, portFile, requestsFile] = process.argv.slice(2);
const script = JSON.parse(fs.readFileSync(scriptFile, "utf8"));
let served = 0;

function chunk(res, delta, finish, usage) {
  const body = {
    id: `chatcmpl-${served}`,
    object: "chat.completion.chunk",
    created: 0,
    model: "fake-1",
    choices: delta === null ? [] : [{ index: 0, delta, finish_reason: finish ?? null }],
  };
  if (usage) body.usage = usage;
  res.write(`data: ${JSON.stringify(body)}\n\n`);
}

const server = http.createServer((req, res) => {
  let raw = "";
  req.setEncoding("utf8");
  req.on("data", (part) => {
    raw += part;
  });
  req.on("end", () => {
    fs.appendFileSync(requestsFile, `${raw.replace(/\n/g, " ")}\n`);
    if (!req.url?.endsWith("/chat/completions")) {
      res.writeHead(404).end();
      return;
    }
    const reply = script[served] ?? { text: "(the script has no more replies)" };
    served += 1;
    if (reply.hang) return;
    const prompt = raw.length;
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    chunk(res, { role: "assistant", content: "" });
    if (reply.text) chunk(res, { content: reply.text });
    (reply.tools ?? []).forEach((tool, index) => {
      chunk(res, {
        tool_calls: [
          {
            index,
            id: `call_${served}_${index}`,
            type: "function",
            function: { name: tool.name, arguments: JSON.stringify(tool.args ?? {}) },
          },
        ],
      });
    });
    chunk(res, {}, reply.tools?.length ? "tool_calls" : "stop");
    const promptTokens = Math.ceil(prompt / 4);
    chunk(res, null, null, { prompt_tokens: promptTokens, completion_tokens: 10, total_tokens: promptTokens + 10 });
    res.end("data: [DONE]\n\n");
  });
});

server.listen(0, "127.0.0.1", () => {
  fs.writeFileSync(portFile, String(server.address().port));
});
