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
// then EVENTS `turn_start` events, then EVENTS `context` events whose
// payload holds a long context (the last CONTEXT_MESSAGES messages of the
// file, 5,000 unless `NOTESOUP_PI_BENCH_CONTEXT_MESSAGES` says otherwise)
// whose usage the sidecar computes from its mirror (as in Pi with a real
// model; the states follow `ready.usageOmitted` and `ready.usageComputed`
// as the shim's do), clear of the budget's lines, then one `context` event
// with Pi's usage past the warning line (as under a virtual model; the
// warning goes out with it), then
// EVENTS `context_with_system` events over the same context (Pi's messages
// kept), then one over it with a fork's copied root boot and the session's
// own root boot first (the copied boot dropped: an edit). Each binary is
// greeted with the bridge protocol its `--version` names, and its
// `ready.omit` and `ready.summarize` rules are applied to the payloads as
// the shim applies them. Prints one JSON object: per binary, the medians
// of the handshake, `session_start`, `turn_start`, the two kinds of
// `context` and of `context_with_system` (from the event line written to
// its result read, the shim's answer to Pi built), the lines' sizes, and
// the sidecar's peak RSS.
//
// With `NOTESOUP_PI_BENCH_NOTES=N`, N notes are written once into a notes
// root every sidecar shares (`PI_NOTES_HOME`), in 100-note folders of
// `@human`, and left to settle; each sidecar keeps its boot caches in an
// `XDG_CACHE_HOME` of the bench's: per binary one kept across runs (after
// one unmeasured start fills it) for an ordinary start, and for a "first
// start ever", measured before it in each run, an empty one (that sidecar
// only starts the session). After each run's ordinary starts a note is
// written (renamed into a folder, as notesoup writes) and left to settle,
// and one more sidecar per binary, with its kept caches, only starts the
// session: the start after a session that wrote a note. The report adds the medians of
// `session_start` at first starts and at starts after a write.

import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

// The shim's own payload helpers (Node strips their types).
import { idsHash, omit, summarize } from "../package/extensions/payload.ts";

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
const onDisk = { count: ids.length, lastId: ids[ids.length - 1], idsHash: idsHash(ids.map((id) => ({ id }))) };

// A long context as Pi's `context` handlers get it: the file's last
// messages, in order.
const contextSize = Number(process.env.NOTESOUP_PI_BENCH_CONTEXT_MESSAGES ?? 5000);
const contextMessages = [];
for (let at = lines.length - 1; at > 0 && contextMessages.length < contextSize; at--) {
  try {
    const entry = JSON.parse(lines[at]);
    if (entry.type === "message") contextMessages.push(entry.message);
  } catch {
    // Pi skips a line it cannot parse.
  }
}
contextMessages.reverse();

/** The bridge protocol `binary --version` names (`bridge protocol N`). */
function protocolOf(binary) {
  const line = execFileSync(binary, ["--version"], { encoding: "utf8" });
  const found = /bridge protocol (\d+)/.exec(line);
  if (!found) throw new Error(`${binary} --version names no bridge protocol: ${line}`);
  return Number(found[1]);
}

/** The shim's answer to Pi for `context_with_system`: a protocol-4 sidecar's `{messages}`, or the edit applied to Pi's messages. */
function contextWithSystemAnswer(payload, value) {
  if (!value) return undefined;
  if (!Array.isArray(value.keep)) return value;
  const kept = value.keep.flatMap((range) => payload.messages.slice(range.from, range.to));
  return { messages: value.head ? [value.head, ...kept] : kept };
}

/** The shim's answer to Pi for `context`: a protocol-3 sidecar's `{messages}`, or Pi's messages and `{append}`. */
function contextAnswer(payload, value) {
  if (!value) return undefined;
  if (Array.isArray(value.append)) return { messages: [...payload.messages, ...value.append] };
  return value;
}

// The shared notes root, when the bench has notes.
const notesCount = Number(process.env.NOTESOUP_PI_BENCH_NOTES ?? 0);
const benchDir = fs.mkdtempSync(path.join(os.tmpdir(), "notesoup-sidecar-bench-notes-"));
const notesRoot = notesCount > 0 ? path.join(benchDir, "notes") : undefined;
if (notesRoot) {
  for (let i = 0; i < notesCount; i++) {
    const dir = path.join(notesRoot, "human", `topic-${String(Math.floor(i / 100)).padStart(3, "0")}`);
    if (i % 100 === 0) fs.mkdirSync(dir, { recursive: true });
    const updatedAt = new Date(Date.UTC(2026, 0, 1) + i * 60_000).toISOString().replace("Z", "+00:00");
    fs.writeFileSync(
      path.join(dir, `note-${String(i).padStart(5, "0")}.md`),
      `---\nupdatedAt: ${updatedAt}\n---\n\n# Note ${i}\n\nWhat was learned about topic ${i % 97}.\n`,
    );
  }
  // Caches keep only notes and folders that settled (2 s) before a read.
  await new Promise((resolve) => setTimeout(resolve, 2500));
}

/** One sidecar of `binary` keeping its caches in `cacheHome`; with `startOnly`, it only starts the session. */
async function once(binary, cacheHome, startOnly = false) {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), "notesoup-sidecar-bench-"));
  const child = spawn(binary, ["serve"], {
    stdio: ["pipe", "pipe", "inherit"],
    env: {
      ...process.env,
      HOME: home,
      PI_NOTES_HOME: notesRoot ?? path.join(home, "notes"),
      XDG_CACHE_HOME: cacheHome,
    },
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
  let usage = { tokens: 50000, contextWindow: 200000, percent: 25 };
  // Whether Pi's usage is sent for the events whose usage the sidecar can
  // compute (as the shim does under a virtual model); otherwise they leave
  // it to the sidecar, as in Pi with a real model.
  let piUsage = false;
  // How a state treats the usage, as the shim's `usageMode` does.
  const usageMode = (name) =>
    usageOmitted.includes(name) ? "omitted" : usageComputed.includes(name) && !piUsage ? "local" : "pi";
  const state = (mode) => {
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
      contextUsage: mode === "pi" ? usage : undefined,
      usageLocal: mode === "local" ? true : undefined,
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
  let omitted = [];
  let summarized = [];
  let usageOmitted = [];
  let usageComputed = [];
  let ownBoot;
  let lastLine = 0;
  let lastValue;
  async function event(name, payload) {
    const id = ++nextEvent;
    const begin = process.hrtime.bigint();
    const rule = omitted.find((r) => r.event === name);
    const trimmed = rule ? omit(payload, rule.paths) : payload;
    const summary = summarized.find((r) => r.event === name);
    const body = summary ? summarize(trimmed, summary) : trimmed;
    const mode = usageMode(name);
    const line = JSON.stringify({ type: "event", body: { id, name, payload: body, state: state(mode) } });
    lastLine = line.length;
    child.stdin.write(`${line}\n`);
    for (;;) {
      const message = await receive();
      if (message.type === "result" && message.body.id === id) {
        if (message.body.error) throw new Error(`${name}: ${message.body.error}`);
        const value = message.body.value;
        lastValue =
          name === "context"
            ? contextAnswer(payload, value)
            : name === "context_with_system"
              ? contextWithSystemAnswer(payload, value)
              : value;
        return process.hrtime.bigint() - begin;
      }
      if (message.type !== "action") throw new Error(`unexpected ${message.type}`);
      const { kind, args } = message.body.action;
      if (kind === "sendMessage") {
        const m = args.message;
        if (m.customType === "notesoup/boot") ownBoot = { role: "custom", ...m, timestamp: Date.now() };
        append({ type: "custom_message", customType: m.customType, content: m.content, display: m.display, details: m.details });
      } else if (kind === "appendEntry") {
        append({ type: "custom", customType: args.customType, data: args.data });
      } else if (kind === "resendEntries") {
        throw new Error("the sidecar asked for every entry: the file did not hold them");
      }
      send({ type: "actionResult", body: { id: message.body.id, state: state(mode) } });
    }
  }

  const begin = process.hrtime.bigint();
  send({ type: "hello", body: { protocol: protocols.get(binary), piVersion: "1.6.0" } });
  const ready = await receive();
  if (ready.type !== "ready") throw new Error(JSON.stringify(ready));
  const handshake = process.hrtime.bigint() - begin;
  omitted = ready.body.omit ?? [];
  summarized = ready.body.summarize ?? [];
  usageOmitted = ready.body.usageOmitted ?? [];
  usageComputed = ready.body.usageComputed ?? [];
  const start = await event("session_start", { type: "session_start", reason: "resume" });
  if (startOnly) {
    child.stdin.end();
    await new Promise((resolve) => child.on("close", resolve));
    fs.rmSync(home, { recursive: true, force: true });
    return { sessionStart: ms(start) };
  }
  const turns = [];
  for (let i = 0; i < events; i++) {
    turns.push(await event("turn_start", { type: "turn_start", turnIndex: i, timestamp: Date.now() }));
  }
  // EVENTS events `name` over the long context, each of which must leave
  // Pi's messages as they are (`why` says what a change would mean): their
  // times, and the last line's size.
  async function keepingTheMessages(name, why) {
    const times = [];
    let line = 0;
    for (let i = 0; i < events; i++) {
      times.push(await event(name, { type: name, messages: contextMessages }));
      line = lastLine;
      if (lastValue !== undefined) throw new Error(`${name}: ${why}`);
    }
    return [times, line];
  }
  const [contexts, contextLine] = await keepingTheMessages("context", "the budget changed a request clear of its lines");
  // Past the warning line: the warning goes out with this request (Pi's
  // usage, as under a virtual model: the session's own is far from it).
  usage = { tokens: 199000, contextWindow: 200000, percent: 99.5 };
  piUsage = true;
  const warning = await event("context", { type: "context", messages: contextMessages });
  const warned = lastValue?.messages;
  if (warned?.length !== contextMessages.length + 1) {
    throw new Error(`context at the warning: expected one message added, got ${warned?.length}`);
  }
  const [withSystem, withSystemLine] = await keepingTheMessages("context_with_system", "the messages changed without a boot to refresh");
  // A fork's copied root boot before the session's own: it is dropped.
  if (!ownBoot) throw new Error("session_start sent no root boot");
  const foreign = { ...ownBoot, details: { windowId: "pcw:ffffffff:root", sessionId: "ffffffff-0000-4000-8000-000000000000" } };
  const forked = [foreign, ownBoot, ...contextMessages];
  const withSystemEdit = await event("context_with_system", { type: "context_with_system", messages: forked });
  const edited = lastValue?.messages;
  if (edited?.length !== forked.length - 1 || edited[0].details?.windowId !== ownBoot.details?.windowId) {
    throw new Error(`context_with_system with a copied boot: expected it dropped, got ${edited?.length}`);
  }
  const status = fs.readFileSync(`/proc/${child.pid}/status`, "utf8");
  const hwm = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
  child.stdin.end();
  await new Promise((resolve) => child.on("close", resolve));
  fs.rmSync(home, { recursive: true, force: true });
  return {
    handshake: ms(handshake),
    sessionStart: ms(start),
    turnStart: median(turns.map(ms)),
    context: median(contexts.map(ms)),
    contextWarning: ms(warning),
    contextLineBytes: contextLine,
    withSystem: median(withSystem.map(ms)),
    withSystemEdit: ms(withSystemEdit),
    withSystemLineBytes: withSystemLine,
    rssMb: hwm,
  };
}

const protocols = new Map(binaries.map((binary) => [binary, protocolOf(binary)]));

const samples = binaries.map(() => []);
const firstStarts = binaries.map(() => []);
const afterWrites = binaries.map(() => []);
const keptCaches = binaries.map((_, at) => path.join(benchDir, `kept-cache-${at}`));
if (notesRoot) {
  for (const [at, binary] of binaries.entries()) await once(binary, keptCaches[at], true);
}
for (let run = 0; run < runs; run++) {
  for (const [at, binary] of binaries.entries()) {
    if (notesRoot) {
      const fresh = fs.mkdtempSync(path.join(benchDir, "fresh-cache-"));
      firstStarts[at].push((await once(binary, fresh, true)).sessionStart);
      fs.rmSync(fresh, { recursive: true, force: true });
    }
    samples[at].push(await once(binary, keptCaches[at]));
  }
  if (notesRoot) {
    const folder = path.join(notesRoot, "human", "topic-000");
    const temp = path.join(folder, `.written-${run}.md.tmp`);
    fs.writeFileSync(temp, `---\nupdatedAt: ${new Date().toISOString().replace("Z", "+00:00")}\n---\n\n# Written\n`);
    fs.renameSync(temp, path.join(folder, `written-${run}.md`));
    await new Promise((resolve) => setTimeout(resolve, 2500));
    for (const [at, binary] of binaries.entries()) {
      afterWrites[at].push((await once(binary, keptCaches[at], true)).sessionStart);
    }
  }
}
fs.rmSync(benchDir, { recursive: true, force: true });
const report = {
  notes: notesCount,
  entries: ids.length,
  runs,
  events,
  contextMessages: contextMessages.length,
  contextMessagesBytes: JSON.stringify(contextMessages).length,
  binaries: {},
};
for (const [at, binary] of binaries.entries()) {
  const of = (field) => median(samples[at].map((sample) => sample[field]));
  report.binaries[binary] = {
    handshakeMs: of("handshake"),
    sessionStartMs: of("sessionStart"),
    sessionStartAllMs: samples[at].map((sample) => Math.round(sample.sessionStart)),
    sessionStartFirstMs: notesRoot ? median(firstStarts[at]) : null,
    sessionStartFirstAllMs: firstStarts[at].map(Math.round),
    sessionStartAfterWriteMs: notesRoot ? median(afterWrites[at]) : null,
    sessionStartAfterWriteAllMs: afterWrites[at].map(Math.round),
    turnStartMs: of("turnStart"),
    contextMs: of("context"),
    contextWarningMs: of("contextWarning"),
    contextLineBytes: of("contextLineBytes"),
    contextWithSystemMs: of("withSystem"),
    contextWithSystemEditMs: of("withSystemEdit"),
    contextWithSystemLineBytes: of("withSystemLineBytes"),
    protocol: protocols.get(binary),
    rssMb: of("rssMb"),
  };
}
console.log(JSON.stringify(report, null, 2));
