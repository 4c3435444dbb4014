// Real Pi 1.6.0 resuming a session file and answering one prompt, with or
// without the notesoup package: what a user waits for when they reopen a
// long session.
//
// usage: node resume.mjs PACKAGE_DIR|none|noop WORK_DIR SESSION_FILE [LATER]
//   (NOTESOUP_PI_NODE_MODULES must be set; NOTESOUP_PI_BIN with a package)
//
// `noop` loads a package whose one extension subscribes to the events
// notesoup's shim holds while idle and does nothing: what any extension costs Pi (jiti
// loading it, and the work Pi does for each event that has handlers),
// apart from notesoup's own work (NOTESOUP_PI_BENCH_NOOP_SHAPE adds the
// package's skills and a child process, see below). Like an installed package, it stays at
// one path between runs (in the temporary directory), so Pi's loader finds
// its kept transform, as it finds notesoup's.
//
// The session file is copied into WORK_DIR (Pi appends to it); a copy an
// earlier run left there is written over in place (the same file, as Pi
// finds a session it resumes again, its appended entries gone). Pi's SDK
// loads its resources (the package, through the `packages` setting, as
// `pi install <dir>` records it), opens the copy, binds the extensions
// (`session_start`, reason `resume`) and answers one prompt with the faux
// model, then LATER more prompts (5 unless given), each timed on its own:
// the events of an ordinary prompt in a long session. Prints one JSON
// object: the milliseconds from the start of the script to the first
// prompt's answer (`totalMs`) and of each phase, the median of the later
// prompts (`laterMs`), Pi's own process's peak RSS in MB up to the
// first answer (the sidecar is another process), and the inode of the
// session's copy (`sessionIno`), which stays in WORK_DIR.

import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

import { fauxModel, fauxSession, loadPi, loadResources } from "../tests/real_pi/pi_sdk.mjs";

const begin = process.hrtime.bigint();
const [packageArg, workDir, sessionFile, laterArg] = process.argv.slice(2);
const laterPrompts = Number(laterArg ?? 5);
const nodeModules = process.env.NOTESOUP_PI_NODE_MODULES;
if (!nodeModules || !sessionFile) {
  throw new Error("usage: resume.mjs PACKAGE_DIR|none|noop WORK_DIR SESSION_FILE (NOTESOUP_PI_NODE_MODULES set)");
}
const pi = await loadPi();
const { sdk, piAi } = pi;
const since = () => Number(process.hrtime.bigint() - begin) / 1e6;

/** The events notesoup's shim holds while no reset is under way. */
function idleEvents() {
  const ready = JSON.parse(
    fs.readFileSync(new URL("../package/extensions/ready.json", import.meta.url), "utf8"),
  );
  const held = new Set(["session_start", "session_shutdown", "before_agent_start"]);
  for (const event of ready.events) if (!ready.onDemand.includes(event)) held.add(event);
  if (ready.onDemand.includes("turn_end")) held.add("message_end");
  return [...held];
}

const withPackage = packageArg !== "none";
let packageDir = packageArg;
if (packageArg === "noop") {
  // The events notesoup's shim holds while its reset is idle, read from the
  // handshake the package ships: the ones it always holds, the sidecar's
  // forwarded events but those it takes on demand, and `message_end`, which
  // the shim answers itself while `turn_end` is on demand;
  // NOTESOUP_PI_BENCH_NOOP_EVENTS (a JSON list) subscribes it to others:
  // what Pi charges for one event's handlers.
  // NOTESOUP_PI_BENCH_NOOP_SHAPE (a JSON list) gives it what Pi and Node
  // charge for the shape notesoup's package must have, apart from
  // notesoup's own work: "skills" ships copies of the package's two skills
  // (Pi reads and parses each one's frontmatter as it loads), "spawn"
  // starts a child process from the factory, as the shim starts its
  // sidecar (Node forks Pi's process to start any child).
  const events = process.env.NOTESOUP_PI_BENCH_NOOP_EVENTS
    ? JSON.parse(process.env.NOTESOUP_PI_BENCH_NOOP_EVENTS)
    : idleEvents();
  const shape = JSON.parse(process.env.NOTESOUP_PI_BENCH_NOOP_SHAPE ?? "[]");
  const skills = shape.includes("skills") ? ["memory", "dream"] : [];
  const spawnChild = shape.includes("spawn")
    ? `  const child = spawn("cat", [], { stdio: "pipe" });\n  child.unref();\n  for (const stream of [child.stdin, child.stdout, child.stderr]) (stream as any).unref?.();\n  process.once("exit", () => child.kill());\n`
    : "";
  const files = {
    "package.json": JSON.stringify({
      name: "noop",
      version: "0.0.0",
      type: "module",
      keywords: ["pi-package"],
      pi: { extensions: ["./extensions/noop.ts"], ...(skills.length > 0 ? { skills: ["./skills"] } : {}) },
    }),
    "extensions/noop.ts":
      (spawnChild ? `import { spawn } from "node:child_process";\n\n` : "") +
      `export default function noop(pi: any): void {\n${spawnChild}  for (const name of ${JSON.stringify(events)}) pi.on(name, () => undefined);\n}\n`,
    ...Object.fromEntries(
      skills.map((skill) => [
        `skills/${skill}/SKILL.md`,
        fs.readFileSync(new URL(`../package/skills/${skill}/SKILL.md`, import.meta.url), "utf8"),
      ]),
    ),
  };
  // One folder per event list, kept between runs and written only when its
  // files differ: Pi's loader (jiti) keeps its transform of an extension
  // by path and file, as it does for an installed package, so each run
  // pays what an installed extension costs, not a first load's transform.
  const key = createHash("sha256").update(JSON.stringify(files)).digest("hex").slice(0, 16);
  packageDir = path.join(os.tmpdir(), `notesoup-pi-bench-noop-${key}`);
  for (const [name, text] of Object.entries(files)) {
    const file = path.join(packageDir, name);
    let current;
    try {
      current = fs.readFileSync(file, "utf8");
    } catch {
      current = undefined;
    }
    if (current !== text) {
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(file, text);
    }
  }
}
const agentDir = path.join(workDir, "agent");
const cwd = path.join(workDir, "project");
const sessionDir = path.join(workDir, "sessions");
for (const dir of [agentDir, cwd, sessionDir]) fs.mkdirSync(dir, { recursive: true });
fs.writeFileSync(
  path.join(agentDir, "settings.json"),
  JSON.stringify(withPackage ? { packages: [packageDir] } : {}),
);
const resumed = path.join(sessionDir, path.basename(sessionFile));
fs.copyFileSync(sessionFile, resumed);
const phases = { modules: since() };

// The time Pi waits in the package's event handlers, by event: each handler
// Pi keeps for the package's extension (`extension.handlers`, where Pi's
// runner takes them from at every event) is wrapped in a timer, those the
// extension subscribes later too; unsubscribing still finds the handler.
// Pi's own time for an event that has handlers (the contexts it builds
// and clones for them) is not in it: the no-op extension shows that part.
const inHandlers = new Map();
let handlerMs = 0;
class TimedHandlers extends Array {
  static get [Symbol.species]() {
    return Array;
  }
  indexOf(handler) {
    return super.indexOf(timers.get(handler) ?? handler);
  }
}
const timers = new WeakMap();
function timed(name, handler) {
  if (timers.has(handler)) return timers.get(handler);
  const timer = async (...args) => {
    const start = performance.now();
    try {
      return await handler(...args);
    } finally {
      const ms = performance.now() - start;
      handlerMs += ms;
      const seen = inHandlers.get(name) ?? { ms: 0, count: 0 };
      inHandlers.set(name, { ms: seen.ms + ms, count: seen.count + 1 });
    }
  };
  timers.set(handler, timer);
  timers.set(timer, timer);
  return timer;
}
function timeHandlers(handlers) {
  const wrap = (name, list) => {
    const wrapped = TimedHandlers.from(list, (handler) => timed(name, handler));
    return wrapped;
  };
  for (const [name, list] of handlers) Map.prototype.set.call(handlers, name, wrap(name, list));
  handlers.set = (name, list) => Map.prototype.set.call(handlers, name, wrap(name, list));
}

const model = await fauxModel(pi, agentDir, { contextWindow: 100000000 });
const resources = await loadResources(sdk, cwd, agentDir, {
  systemPrompt: "You are the notesoup bench agent.",
});
const loaded = resources.resourceLoader.getExtensions();
if (withPackage && !loaded.extensions.some((e) => e.path.startsWith(packageDir))) {
  throw new Error(`Pi did not load the package from ${packageDir}: ${JSON.stringify(loaded.errors)}`);
}
for (const extension of loaded.extensions) timeHandlers(extension.handlers);
phases.resources = since();

const sessionManager = sdk.SessionManager.open(resumed, sessionDir, cwd);
phases.open = since();
const session = await fauxSession(sdk, model, resources, {
  sessionManager,
  sessionStartEvent: { type: "session_start", reason: "resume" },
});
const errors = [];
const notices = [];
await session.bindExtensions({
  uiContext: { notify: (message, level) => notices.push(`${level ?? "info"}: ${message}`) },
  onError: (error) => errors.push(`${error.event}: ${error.error}`),
});
phases.sessionStart = since();
const startHandlerMs = handlerMs;

model.faux.setResponses([piAi.fauxAssistantMessage("Resumed.")]);
await session.prompt("Where were we?");
phases.prompt = since();
const firstPromptHandlerMs = handlerMs - startHandlerMs;
const firstEvents = Object.fromEntries(inHandlers);
const totalMs = since();
// Pi's peak up to the first answer: what resuming costs it.
const rssMb = process.resourceUsage().maxRSS / 1024;
const later = [];
const laterInHandlers = [];
inHandlers.clear();
for (let i = 0; i < laterPrompts; i++) {
  model.faux.setResponses([piAi.fauxAssistantMessage(`Step ${i} done.`)]);
  const start = process.hrtime.bigint();
  const before = handlerMs;
  await session.prompt(`Next step ${i}.`);
  later.push(Number(process.hrtime.bigint() - start) / 1e6);
  laterInHandlers.push(handlerMs - before);
}
const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length > 0 ? sorted[Math.floor(sorted.length / 2)] : null;
};
const laterMs = median(later);
// The time in the package's handlers: at the start (from its load to the
// end of `session_start`), in the first prompt, in the median later prompt,
// and each later prompt's events, with their mean time.
const handlers = {
  startMs: startHandlerMs,
  firstPromptMs: firstPromptHandlerMs,
  firstEvents,
  laterMs: median(laterInHandlers),
  laterEvents: Object.fromEntries(
    [...inHandlers].map(([name, { ms, count }]) => [name, { count: count / Math.max(laterPrompts, 1), meanMs: ms / count }]),
  ),
};
const unavailable = notices.filter((notice) => notice.includes("notesoup unavailable"));
if (errors.length > 0 || unavailable.length > 0) {
  throw new Error(`Pi reported: ${[...errors, ...unavailable].join("; ")}`);
}
session.dispose();
// The session as this run left it (notesoup's boot in its window, when the
// package ran), for a bench of later resumes.
if (process.env.NOTESOUP_PI_BENCH_KEEP) fs.copyFileSync(resumed, process.env.NOTESOUP_PI_BENCH_KEEP);
// The copy stays for the next run in WORK_DIR, which writes over it in
// place: its inode tells the bench it was the same file.
const sessionIno = String(fs.statSync(resumed, { bigint: true }).ino);
const entries = sessionManager.getEntryCount();
process.stdout.write(`${JSON.stringify({ totalMs, laterMs, phases, rssMb, handlers, entries, sessionIno })}\n`);
process.exit(0);
