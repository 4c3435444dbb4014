// The cost of notesoup's sidecar round trip inside real Pi 1.6.0.
//
// usage: node roundtrip.mjs PACKAGE_DIR WORK_DIR [ROUNDS]
//   (NOTESOUP_PI_NODE_MODULES and NOTESOUP_PI_BIN must be set)
//
// 1. Sidecar start: spawn `notesoup-pi serve`, send `hello`, wait for
//    `ready` (no session is loaded before the handshake).
// 2. Per-event overhead: two Pi sessions in the same process, one with the
//    notesoup package (loaded through the `packages` setting), one with a
//    no-op extension subscribed to the same events. Each event is dispatched
//    through Pi's own ExtensionRunner with the session's real context, and
//    the median of the notesoup session minus the median of the no-op one is
//    the overhead. `context` is Pi's emitContext, which runs the `context`
//    and the `context_with_system` handlers: two round trips.
// Prints one JSON object.

import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";

import { fauxModel, fauxSession, loadPi, loadResources } from "../tests/real_pi/pi_sdk.mjs";

const [packageDir, workDir, roundsArg] = process.argv.slice(2);
const rounds = Number(roundsArg ?? 300);
const nodeModules = process.env.NOTESOUP_PI_NODE_MODULES;
const binary = process.env.NOTESOUP_PI_BIN;
if (!nodeModules || !binary) throw new Error("NOTESOUP_PI_NODE_MODULES and NOTESOUP_PI_BIN must be set");
const pi = await loadPi();
const { sdk, piAi } = pi;

const median = (values) => {
  const sorted = [...values].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return sorted[Math.floor(sorted.length / 2)];
};
const ms = (ns) => Number(ns) / 1e6;

// 1. Sidecar start to ready.
async function startOnce() {
  const begin = process.hrtime.bigint();
  const child = spawn(binary, ["serve"], { stdio: ["pipe", "pipe", "inherit"] });
  const ready = new Promise((resolve, reject) => {
    let buffer = "";
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk) => {
      buffer += chunk;
      if (buffer.includes("\n")) resolve(buffer.slice(0, buffer.indexOf("\n")));
    });
    child.on("error", reject);
  });
  child.stdin.write(`${JSON.stringify({ type: "hello", body: { protocol: 6, piVersion: "1.6.0" } })}\n`);
  const line = await ready;
  const elapsed = process.hrtime.bigint() - begin;
  if (JSON.parse(line).type !== "ready") throw new Error(line);
  child.stdin.end();
  await new Promise((resolve) => child.on("close", resolve));
  return elapsed;
}
const starts = [];
for (let i = 0; i < 30; i++) starts.push(await startOnce());

// 2. Events through Pi's runner.
async function session(name, options) {
  const dir = path.join(workDir, name);
  const agentDir = path.join(dir, "agent");
  const cwd = path.join(dir, "project");
  fs.mkdirSync(agentDir, { recursive: true });
  fs.mkdirSync(cwd, { recursive: true });
  fs.writeFileSync(path.join(agentDir, "settings.json"), JSON.stringify(options.settings ?? {}));
  const model = await fauxModel(pi, agentDir, { contextWindow: 200000 });
  const resources = await loadResources(sdk, cwd, agentDir, {
    extensionFactories: options.factories ?? [],
  });
  const session = await fauxSession(sdk, model, resources, {
    sessionManager: sdk.SessionManager.create(cwd, path.join(dir, "sessions")),
  });
  await session.bindExtensions({ uiContext: { notify: () => {} } });
  // A short real conversation so the events carry a session.
  model.faux.setResponses(Array.from({ length: 10 }, (_, i) => piAi.fauxAssistantMessage(`Answer ${i}.`)));
  for (let i = 0; i < 10; i++) await session.prompt(`Question ${i}: ${"words ".repeat(50)}`);
  return session;
}

const EVENTS = ["turn_start", "context"];
// Both sessions get the same context messages (the no-op session's
// conversation), so only the handlers differ.
let contextMessages;
function payload(name) {
  if (name === "turn_start") return { type: "turn_start", turnIndex: 0, timestamp: Date.now() };
  return { type: "context", messages: contextMessages };
}
async function measure(session) {
  const runner = session.extensionRunner;
  const result = {};
  for (const name of EVENTS) {
    const times = [];
    for (let i = 0; i < rounds; i++) {
      const event = payload(name);
      const begin = process.hrtime.bigint();
      if (name === "context") await runner.emitContext(event.messages);
      else await runner.emit(event);
      times.push(process.hrtime.bigint() - begin);
    }
    result[name] = ms(median(times));
  }
  return result;
}

const noop = await session("noop", {
  factories: [
    (pi) => {
      // Pi's emitContext runs the `context` and then the
      // `context_with_system` handlers: one measured `context` is two events.
      for (const name of [...EVENTS, "context_with_system"]) pi.on(name, () => undefined);
    },
  ],
});
const notesoup = await session("notesoup", { settings: { packages: [packageDir] } });
contextMessages = noop.sessionManager
  .buildSessionProjection()
  .entries.flatMap((entry) => entry.messages)
  .filter((message) => message.role !== "system");
const baseline = await measure(noop);
const withNotesoup = await measure(notesoup);
const overhead = Object.fromEntries(EVENTS.map((name) => [name, withNotesoup[name] - baseline[name]]));
noop.dispose();
notesoup.dispose();
process.stdout.write(
  `${JSON.stringify({
    rounds,
    sidecarStartMedianMs: ms(median(starts)),
    noopMedianMs: baseline,
    notesoupMedianMs: withNotesoup,
    overheadMedianMs: overhead,
  })}\n`,
);
process.exit(0);
