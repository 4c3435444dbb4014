// A long session written by real Pi, and Pi's own cost of opening it.
//
//   node long-session.mjs write <file> [ENTRIES]  writes a session of ENTRIES
//       entries (default 100000) through Pi's SessionManager: user prompts,
//       assistant replies with tool calls and usage, tool results, a
//       compaction every 5000 entries and a branch near the end.
//   node long-session.mjs open <file>  opens it as Pi does
//       (SessionManager.open + buildSessionContext) and prints the message
//       count, so the whole Node process can be timed.
//
// NOTESOUP_PI_NODE_MODULES points at the installed Pi SDK.

import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

const nodeModules = process.env.NOTESOUP_PI_NODE_MODULES;
if (!nodeModules) throw new Error("NOTESOUP_PI_NODE_MODULES is not set (cargo xtask hosts pi)");
const load = (rel) => import(pathToFileURL(path.join(nodeModules, rel)).href);
const { SessionManager } = await load("@earendil-works/pi-coding-agent/dist/index.js");

const [mode, file, count] = process.argv.slice(2);
if (mode === "write") {
  write(file, Number(count ?? 100000));
} else if (mode === "open") {
  const sm = SessionManager.open(file, path.dirname(file), "/work/project");
  const context = sm.buildSessionContext();
  console.log(`${sm.getEntries().length} entries, ${context.messages.length} messages in context`);
} else {
  throw new Error("usage: long-session.mjs write|open <file> [ENTRIES]");
}

function write(target, entries) {
  const dir = fs.mkdtempSync(path.join(path.dirname(target), "pi-session-"));
  const sm = SessionManager.create("/work/project", dir);
  const usage = (input, output) => ({
    input, output, cacheRead: 0, cacheWrite: 0, totalTokens: input + output,
    cost: { input: 0.001, output: 0.002, cacheRead: 0, cacheWrite: 0, total: 0.003 },
  });
  const words = "the cart total is wrong when a coupon and a gift card meet at checkout ".repeat(4);
  const turns = Math.floor(entries / 4);
  let branchFrom = null;
  sm.appendModelChange("faux", "faux-1");
  for (let turn = 0; turn < turns; turn += 1) {
    sm.appendMessage({ role: "user", content: `Step ${turn}: ${words}`, timestamp: Date.now() });
    const call = `call_${turn}`;
    sm.appendMessage({
      role: "assistant",
      content: [
        { type: "text", text: `Working on step ${turn}. ${words}` },
        { type: "toolCall", id: call, name: "read", arguments: { path: `src/file_${turn % 97}.rs` } },
      ],
      api: "faux", provider: "faux", model: "faux-1", usage: usage(1000 + turn, 50),
      stopReason: "toolUse", timestamp: Date.now(),
    });
    sm.appendMessage({
      role: "toolResult", toolCallId: call, toolName: "read",
      content: [{ type: "text", text: `fn step_${turn}() {}\n// ${words}\n`.repeat(2) }],
      details: { lines: 4 }, isError: false, timestamp: Date.now(),
    });
    const reply = sm.appendMessage({
      role: "assistant", content: [{ type: "text", text: `Done with step ${turn}.` }],
      api: "faux", provider: "faux", model: "faux-1", usage: usage(1100 + turn, 20),
      stopReason: "stop", timestamp: Date.now(),
    });
    // A compaction every 1250 turns keeps the last few turns.
    if (turn % 1250 === 1249) sm.appendCompaction(`Summary up to step ${turn}.`, reply, 1000 + turn);
    if (turn === turns - 10) branchFrom = reply;
  }
  if (branchFrom) {
    sm.branch(branchFrom);
    sm.appendMessage({ role: "user", content: "A different question on a branch.", timestamp: Date.now() });
  }
  fs.renameSync(sm.getSessionFile(), target);
  fs.rmSync(dir, { recursive: true, force: true });
  console.log(`wrote ${target}`);
}
