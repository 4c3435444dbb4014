// The sidecar alone on a long session: `notesoup-pi serve` driven over its
// pipes as the shim drives it, without Pi (whose own time, under load,
// hides the sidecar's).
//
// usage: node sidecar.mjs SESSION_FILE RUNS EVENTS BINARY [BINARY...]
//
// For each run, each binary in turn (alternating, so they share the load):
// spawn `serve`, handshake, then `session_start` (reason `resume`) whose
// state leaves every entry to the session file (`onDisk`, as the shim does
// for a written session), answering every action as the shim would
// (`sendMessage` and `appendEntry` add an entry, sent with the next state),
// then EVENTS `turn_start` events. Prints one JSON object: per binary, the
// medians of the handshake, `session_start` and `turn_start` (from the
// event line written to its result read), and the sidecar's peak RSS.

import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

const [sessionFile, runsArg, eventsArg, ...binaries] = process.argv.slice(2);
if (!sessionFile || binaries.length === 0) {
  throw new Error("usage: sidecar.mjs SESSION_FILE RUNS EVENTS BINARY [BINARY...]");
}
const runs = Number(runsArg ?? 5);
const events = Number(eventsArg ?? 20);

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
};
const ms = (ns) => Number(ns) / 1e6;

/** The shim's `idsHash`: FNV-1a over UTF-16 units, a newline after each id. */
function idsHash(ids) {
  let hash = 0x811c9dc5;
  for (const id of ids) {
    for (let i = 0; i < id.length; i++) {
      hash = Math.imul(hash ^ id.charCodeAt(i), 0x01000193) >>> 0;
    }
    hash = Math.imul(hash ^ 0x0a, 0x01000193) >>> 0;
  }
  return hash >>> 0;
}

// What Pi holds after opening the file: its entries' ids, the last as leaf.
const lines = fs.readFileSync(sessionFile, "utf8").split("\n").filter((line) => line.trim());
const header = JSON.parse(lines[0]);
const ids = [];
for (const line of lines.slice(1)) {
  try {
    const entry = JSON.parse(line);
    if (typeof entry.id === "string") ids.push(entry.id);
  } catch {
    // Pi skips a line it cannot parse.
  }
}
const onDisk = { count: ids.length, lastId: ids[ids.length - 1], idsHash: idsHash(ids) };

async function once(binary) {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), "notesoup-sidecar-bench-"));
  const child = spawn(binary, ["serve"], {
    stdio: ["pipe", "pipe", "inherit"],
    env: { ...process.env, HOME: home, PI_NOTES_HOME: path.join(home, "notes") },
  });
  let buffer = "";
  const waiting = [];
  const queued = [];
  child.stdout.setEncoding("utf8");
  child.stdout.on("data", (chunk) => {
    buffer += chunk;
    let at;
    while ((at = buffer.indexOf("\n")) >= 0) {
      const message = JSON.parse(buffer.slice(0, at));
      buffer = buffer.slice(at + 1);
      const next = waiting.shift();
      if (next) next(message);
      else queued.push(message);
    }
  });
  const receive = () =>
    queued.length > 0 ? Promise.resolve(queued.shift()) : new Promise((resolve) => waiting.push(resolve));
  const send = (message) => child.stdin.write(`${JSON.stringify(message)}\n`);

  // The shim's mirror: every entry on disk, then those the actions add.
  const added = [];
  let leaf = onDisk.lastId;
  let sent = 0;
  let first = true;
  const state = () => {
    const from = first ? ids.length : ids.length + sent;
    const entries = first ? [] : added.slice(sent);
    sent = added.length;
    const report = {
      sessionId: header.id,
      header,
      entriesFrom: from,
      entries,
      onDisk: first ? onDisk : undefined,
      leafId: leaf,
      cwd: "/work/project",
      sessionFile,
      idle: true,
      pendingMessages: false,
      signalAborted: false,
      contextUsage: { tokens: 50000, contextWindow: 200000, percent: 25 },
      model: { provider: "faux", id: "faux-1", contextWindow: 200000, maxTokens: 16384 },
      settings: {
        global: {},
        project: {},
        compaction: { enabled: true, reserveTokens: 16384, keepRecentTokens: 20000 },
      },
      projectTrusted: false,
    };
    first = false;
    return report;
  };
  const append = (entry) => {
    const id = Math.floor(Math.random() * 2 ** 32).toString(16).padStart(8, "0");
    added.push({ ...entry, id, parentId: leaf, timestamp: new Date().toISOString() });
    leaf = id;
  };

  let nextEvent = 0;
  async function event(name, payload) {
    const id = ++nextEvent;
    const begin = process.hrtime.bigint();
    send({ type: "event", body: { id, name, payload, state: state() } });
    for (;;) {
      const message = await receive();
      if (message.type === "result" && message.body.id === id) {
        if (message.body.error) throw new Error(`${name}: ${message.body.error}`);
        return process.hrtime.bigint() - begin;
      }
      if (message.type !== "action") throw new Error(`unexpected ${message.type}`);
      const { kind, args } = message.body.action;
      if (kind === "sendMessage") {
        const m = args.message;
        append({ type: "custom_message", customType: m.customType, content: m.content, display: m.display, details: m.details });
      } else if (kind === "appendEntry") {
        append({ type: "custom", customType: args.customType, data: args.data });
      } else if (kind === "resendEntries") {
        throw new Error("the sidecar asked for every entry: the file did not hold them");
      }
      send({ type: "actionResult", body: { id: message.body.id, state: state() } });
    }
  }

  const begin = process.hrtime.bigint();
  send({ type: "hello", body: { protocol: 3, piVersion: "1.6.0" } });
  const ready = await receive();
  if (ready.type !== "ready") throw new Error(JSON.stringify(ready));
  const handshake = process.hrtime.bigint() - begin;
  const start = await event("session_start", { type: "session_start", reason: "resume" });
  const turns = [];
  for (let i = 0; i < events; i++) {
    turns.push(await event("turn_start", { type: "turn_start", turnIndex: i, timestamp: Date.now() }));
  }
  const status = fs.readFileSync(`/proc/${child.pid}/status`, "utf8");
  const hwm = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
  child.stdin.end();
  await new Promise((resolve) => child.on("close", resolve));
  fs.rmSync(home, { recursive: true, force: true });
  return { handshake: ms(handshake), sessionStart: ms(start), turnStart: median(turns.map(ms)), rssMb: hwm };
}

const samples = binaries.map(() => []);
for (let run = 0; run < runs; run++) {
  for (const [at, binary] of binaries.entries()) samples[at].push(await once(binary));
}
const report = { entries: ids.length, runs, events, binaries: {} };
for (const [at, binary] of binaries.entries()) {
  const of = (field) => median(samples[at].map((sample) => sample[field]));
  report.binaries[binary] = {
    handshakeMs: of("handshake"),
    sessionStartMs: of("sessionStart"),
    sessionStartAllMs: samples[at].map((sample) => Math.round(sample.sessionStart)),
    turnStartMs: of("turnStart"),
    rssMb: of("rssMb"),
  };
}
console.log(JSON.stringify(report, null, 2));
