// Drives real Pi 1.6.0 (the SDK's own agent loop) with the notesoup package
// loaded from its folder through Pi's package discovery, as `pi install <dir>`
// records it (the `packages` setting). Only the model is scripted: pi-ai's
// faux provider answers from the plan.
//
// usage: node driver.mjs PLAN.json   (NOTESOUP_PI_NODE_MODULES must be set)
//
// The plan: {packageDir (a folder, or an installed `npm:<name>`), agentDir, cwd, sessionDir, resume?, contextWindow,
// settings?, steps: [...]}. A step is one of
//   {respond: [reply...]}        queue model replies; a reply is
//                                {text?, tools?: [{name, args, id?}], error?, stopReason?}
//   {prompt: "text"}             session.prompt (commands like /fresh-window included)
//   {compact: true}              session.compact() (a manual /compact)
//   {killSidecar: true}          SIGKILL the notesoup-pi child process
//   {shutdown: true}             session_shutdown, as Pi emits it on quit
//   {navigate: {userMessage: N, summarize}}  /tree to the N-th user message entry
// The report on stdout: {sessionFile, requests, offered, notices, errors,
// compactError, compactions, sidecarPid}; `offered` lists each request's
// tool names; `compactions` lists Pi's compaction_start and
// compaction_end events ({type, reason, aborted?, willRetry?, errorMessage?,
// summary?}); `sidecarPid` is the notesoup-pi child's at the end, if any.
//
// The plan's `end` says how the session ends: "shutdown" (the default:
// session_shutdown, as Pi emits it on quit, then session.dispose()),
// "dispose" (only session.dispose(), as an SDK host does: no event; the
// driver then waits until the sidecar is gone) or "none" (nothing: the
// script just ends). Either way the driver never calls process.exit: Node
// must end by itself, so a sidecar that keeps it alive hangs the run.

import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";

import { fauxModel, fauxSession, load, loadPi, loadResources } from "./pi_sdk.mjs";

const plan = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
const pi = await loadPi();
const { sdk, piAi } = pi;
const { emitSessionShutdownEvent } = await load(
  "@earendil-works/pi-coding-agent/dist/core/extensions/runner.js",
);

// What `pi install <dir>` writes: the package path in the global settings.
const settingsFile = path.join(plan.agentDir, "settings.json");
fs.mkdirSync(plan.agentDir, { recursive: true });
fs.writeFileSync(
  settingsFile,
  JSON.stringify({ ...(plan.settings ?? {}), packages: [plan.packageDir] }, null, 2),
);

const requests = [];
const offered = [];
const notices = [];
const errors = [];
const compactions = [];

function text(content) {
  if (typeof content === "string") return content;
  return (content ?? [])
    .map((block) =>
      block.type === "text"
        ? block.text
        : block.type === "toolCall"
          ? `[call ${block.name} ${JSON.stringify(block.arguments)}]`
          : `[${block.type}]`,
    )
    .join("\n");
}

const model = await fauxModel(
  pi,
  plan.agentDir,
  { contextWindow: plan.contextWindow ?? 200000, maxTokens: 8192 },
  { tokenSize: { min: 100000, max: 100000 } },
);
const { faux } = model;

let callId = 0;
function reply(step) {
  return (context) => {
    requests.push(context.messages.map((m) => ({ role: m.role, text: text(m.content) })));
    // The tools Pi offers the model with this request (the faux provider is
    // handed only the messages).
    offered.push(session.getActiveToolNames());
    const blocks = [];
    if (step.text !== undefined) blocks.push(piAi.fauxText(step.text));
    for (const tool of step.tools ?? []) {
      callId += 1;
      blocks.push(piAi.fauxToolCall(tool.name, tool.args ?? {}, { id: tool.id ?? `call_${callId}` }));
    }
    const stopReason =
      step.stopReason ?? (step.error ? "error" : step.tools?.length ? "toolUse" : "stop");
    return piAi.fauxAssistantMessage(blocks.length ? blocks : "", {
      stopReason,
      errorMessage: step.error,
    });
  };
}

const resources = await loadResources(sdk, plan.cwd, plan.agentDir, {
  systemPrompt: "You are the notesoup real-Pi test agent.",
});
const loaded = resources.resourceLoader.getExtensions();
for (const error of loaded.errors) errors.push(`load: ${error.path}: ${error.error}`);
// An npm source (`pi install npm:<name>`) loads from Pi's npm folder.
const loadedFrom = plan.packageDir.startsWith("npm:")
  ? path.join(plan.agentDir, "npm", "node_modules", plan.packageDir.slice("npm:".length))
  : plan.packageDir;
if (!loaded.extensions.some((e) => e.path.startsWith(loadedFrom))) {
  throw new Error(`Pi did not load the package from ${loadedFrom}`);
}

const sessionManager = plan.resume
  ? sdk.SessionManager.open(plan.resume, plan.sessionDir, plan.cwd)
  : sdk.SessionManager.create(plan.cwd, plan.sessionDir);
const session = await fauxSession(sdk, model, resources, {
  sessionManager,
  sessionStartEvent: plan.resume ? { type: "session_start", reason: "resume" } : undefined,
});
await session.bindExtensions({
  uiContext: {
    notify: (message, level) => notices.push({ level: level ?? "info", message }),
  },
  onError: (error) => errors.push(`${error.event}: ${error.error}`),
});

/** Pi's own context usage as each tool starts, to compare with what the tool reads. */
const toolUsages = [];
session.subscribe((event) => {
  if (event.type === "tool_execution_start") {
    toolUsages.push({ tool: event.toolName, tokens: session.getContextUsage()?.tokens ?? null });
  } else if (event.type === "compaction_start") compactions.push({ type: event.type, reason: event.reason });
  else if (event.type === "compaction_end")
    compactions.push({
      type: event.type,
      reason: event.reason,
      aborted: event.aborted,
      willRetry: event.willRetry,
      errorMessage: event.errorMessage ?? null,
      summary: event.result?.summary ?? null,
    });
});

let compactError;
for (const step of plan.steps) {
  if (step.respond) faux.appendResponses(step.respond.map(reply));
  else if (step.prompt !== undefined) await session.prompt(step.prompt);
  else if (step.compact) {
    try {
      await session.compact();
    } catch (error) {
      compactError = error instanceof Error ? error.message : String(error);
    }
  } else if (step.killSidecar) {
    const pid = sidecarPid();
    if (pid === undefined) throw new Error("no notesoup-pi child to kill");
    process.kill(pid, "SIGKILL");
    // Wait until the process is dead (a zombie or gone), not for a time.
    while (!dead(pid)) await new Promise((resolve) => setImmediate(resolve));
  } else if (step.navigate) {
    const users = session.sessionManager
      .getEntries()
      .filter((entry) => entry.type === "message" && entry.message.role === "user");
    const target = users[step.navigate.userMessage];
    if (!target) throw new Error(`no user message ${step.navigate.userMessage}`);
    await session.navigateTree(target.id, { summarize: step.navigate.summarize ?? false });
  } else if (step.asideOffPath) {
    // An entry appended at the leaf, then the leaf moved back to its
    // parent, with no event between: the next one finds an entry that is
    // not on the leaf's path.
    const sm = session.sessionManager;
    const leaf = sm.getLeafId();
    sm.appendCustomEntry("notesoup-test/aside", { text: step.asideOffPath });
    sm.branch(leaf);
  } else if (step.shuffle) {
    // Session changes with no event between them, drawn from a seeded
    // generator: entries appended at the leaf, the leaf moved to any
    // entry, an entry appended and left off the leaf's path.
    const sm = session.sessionManager;
    let seed = step.shuffle.seed >>> 0;
    const next = (n) => {
      seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
      return seed % n;
    };
    for (let i = 0; i < step.shuffle.steps; i++) {
      const kind = next(3);
      if (kind === 0) {
        sm.appendCustomEntry("notesoup-test/shuffle", { i });
      } else if (kind === 1) {
        const entries = sm.getEntries();
        sm.branch(entries[next(entries.length)].id);
      } else {
        const leaf = sm.getLeafId();
        sm.appendCustomEntry("notesoup-test/shuffle", { i, aside: true });
        if (leaf) sm.branch(leaf);
      }
    }
  } else if (step.shutdown) {
    await emitSessionShutdownEvent(session.extensionRunner, { type: "session_shutdown", reason: "quit" });
  } else throw new Error(`unknown step ${JSON.stringify(step)}`);
  await session.waitForIdle?.();
}
const pending = faux.getPendingResponseCount();
const sessionFile = session.sessionManager.getSessionFile();
const pid = sidecarPid() ?? null;
const end = plan.end ?? "shutdown";
if (end === "shutdown") {
  await emitSessionShutdownEvent(session.extensionRunner, { type: "session_shutdown", reason: "quit" });
  session.dispose();
} else if (end === "dispose") {
  session.dispose();
  // Until the shim notices and stops its sidecar; a shim that never does
  // hangs the run.
  if (pid !== null) while (!dead(pid)) await new Promise((resolve) => setTimeout(resolve, 20));
} else if (end !== "none") throw new Error(`unknown end ${end}`);
process.stdout.write(
  `${JSON.stringify({ sessionFile, requests, offered, notices, errors, compactError, pendingResponses: pending, compactions, sidecarPid: pid, toolUsages })}\n`,
);

/** The pid of this process's notesoup-pi child, if it has one. */
function sidecarPid() {
  const children = execFileSync("ps", ["--ppid", String(process.pid), "-o", "pid=,comm="], {
    encoding: "utf8",
  });
  const sidecar = children
    .split("\n")
    .map((line) => line.trim().split(/\s+/))
    .find(([, comm]) => comm === "notesoup-pi");
  return sidecar ? Number(sidecar[0]) : undefined;
}

/** Whether `pid` is dead: a zombie, or gone. */
function dead(pid) {
  try {
    return /^State:\s+Z/m.test(fs.readFileSync(`/proc/${pid}/status`, "utf8"));
  } catch {
    return true;
  }
}
