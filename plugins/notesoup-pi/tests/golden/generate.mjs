// Golden sessions from the real Pi SDK (@earendil-works/pi-coding-agent 1.6.0).
//
// Run through `cargo xtask golden-pi`, which installs Node 22 and the SDK and
// passes NOTESOUP_PI_NODE_MODULES. For every scenario this writes
// `<name>.jsonl`, a session file written by Pi's own SessionManager (and, for
// `agent-loop`, `notesoup-boundary` and `notesoup-settle`, by Pi's agent loop
// with the faux provider; the notesoup ones with the Pi package and the
// `notesoup-pi serve` sidecar from NOTESOUP_PI_BIN), and
// `<name>.expected.json`, Pi's own reading of that file: for each dumped leaf
// the branch, buildContextEntries, buildSessionProjection, convertToLlm,
// getCurrentSystemMessage and the token estimates. The Rust tests compare
// notesoup-pi against these dumps; Node is never needed to run them.
//
// The clock, entry ids and session ids are made deterministic so that a
// regeneration reproduces the committed files byte for byte.

import crypto from "node:crypto";
import fs from "node:fs";
import { syncBuiltinESMExports } from "node:module";
import path from "node:path";
import { pathToFileURL } from "node:url";

const outDir = path.resolve(process.argv[2] ?? ".");
const nodeModules = process.env.NOTESOUP_PI_NODE_MODULES;
if (!nodeModules) throw new Error("NOTESOUP_PI_NODE_MODULES is not set (run `cargo xtask golden-pi`)");

// ---- determinism ---------------------------------------------------------
const START = Date.parse("2026-03-01T09:00:00.000Z");
let clock = START;
const RealDate = Date;
class FakeDate extends RealDate {
  constructor(...args) {
    if (args.length === 0) {
      clock += 1000;
      super(clock);
    } else {
      super(...args);
    }
  }
  static now() {
    clock += 1000;
    return clock;
  }
}
globalThis.Date = FakeDate;
performance.now = () => 0;
let uuidCounter = 0;
crypto.randomUUID = () => {
  uuidCounter += 1;
  const hex = crypto.createHash("sha256").update(`notesoup-golden-${uuidCounter}`).digest("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
};
syncBuiltinESMExports();

const load = (rel) => import(pathToFileURL(path.join(nodeModules, rel)).href);
const sdk = await load("@earendil-works/pi-coding-agent/dist/index.js");
const compaction = await load("@earendil-works/pi-coding-agent/dist/core/compaction/compaction.js");
const piAi = await load("@earendil-works/pi-ai/dist/index.js");
const piAiEstimate = await load("@earendil-works/pi-ai/dist/utils/estimate.js");
const extensionLoader = await load("@earendil-works/pi-coding-agent/dist/core/extensions/loader.js");
const { emitSessionShutdownEvent } = await load("@earendil-works/pi-coding-agent/dist/core/extensions/runner.js");
const { SessionManager, buildContextEntries, buildSessionProjection, convertToLlm } = sdk;

// ---- helpers --------------------------------------------------------------
const CWD = "/work/project";
const ZERO_USAGE = {
  input: 0,
  output: 0,
  cacheRead: 0,
  cacheWrite: 0,
  totalTokens: 0,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
};
// Key order as pi-ai's OpenAI and Google providers build usage (reasoning
// before totalTokens); costs are real doubles such as 0.0012000000000000001.
function usage(input, output, { cacheRead = 0, reasoning, totalTokens } = {}) {
  return {
    input,
    output,
    cacheRead,
    cacheWrite: 0,
    ...(reasoning === undefined ? {} : { reasoning }),
    totalTokens: totalTokens ?? input + output + cacheRead,
    cost: { input: input * 0.0000036, output: output * 0.000015, cacheRead: 0, cacheWrite: 0, total: input * 0.0000036 + output * 0.000015 },
  };
}
const user = (content) => ({ role: "user", content, timestamp: Date.now() });
function assistant(content, { stopReason = "stop", usage: u = usage(120, 30), errorMessage } = {}) {
  const message = piAi.fauxAssistantMessage(content, { stopReason, errorMessage });
  message.usage = u;
  return message;
}
const toolResult = (toolCallId, toolName, text, extra = {}) => ({
  role: "toolResult",
  toolCallId,
  toolName,
  content: [{ type: "text", text }],
  details: extra.details,
  isError: extra.isError ?? false,
  timestamp: Date.now(),
});
const system = (content, extra = {}) => ({ role: "system", content, ...extra, timestamp: Date.now() });
const tool = (name, description) => ({
  name,
  description,
  parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
});

function create(name) {
  const dir = fs.mkdtempSync(path.join(process.env.TMPDIR ?? "/tmp", "notesoup-golden-"));
  const id = `0195f000-0000-7000-8000-${String(scenarios.length + 1).padStart(12, "0")}`;
  return { sm: SessionManager.create(CWD, dir, { id }), dir, name };
}

const scenarios = [];

/** Pi's reading of a session file at the given leaves (null = the file's leaf). */
function dump(file, leaves) {
  const sm = SessionManager.open(file, path.dirname(file), CWD);
  const entries = sm.getEntries();
  const byId = new Map(entries.map((e) => [e.id, e]));
  const result = {
    piVersion: "1.6.0",
    fileLeafId: sm.getLeafId(),
    sessionName: sm.getSessionName() ?? null,
    labels: Object.fromEntries(entries.map((e) => [e.id, sm.getLabel(e.id)]).filter(([, l]) => l !== undefined)),
    leaves: [],
  };
  for (const leaf of leaves) {
    const leafId = leaf ?? sm.getLeafId();
    const branch = leafId === null ? [] : sm.getBranch(leafId);
    const contextEntries = buildContextEntries(entries, leafId, byId);
    const projection = buildSessionProjection(entries, leafId, byId);
    const llm = convertToLlm(projection.messages);
    result.leaves.push({
      leafId,
      branch: branch.map((e) => e.id),
      contextEntries: contextEntries.map((e) => e.id),
      projection: {
        entries: projection.entries.map((e) => ({ sourceId: e.sourceEntry.id, messageCount: e.messages.length })),
        messages: projection.messages,
        thinkingLevel: projection.thinkingLevel,
        model: projection.model,
      },
      llm,
      currentSystemMessage: piAi.getCurrentSystemMessage(projection.messages) ?? null,
      estimates: {
        codingAgent: compaction.estimateContextTokens(projection.messages),
        codingAgentPerMessage: projection.messages.map((m) => compaction.estimateTokens(m)),
        projected: compaction.estimateProjectedContextTokens(projection, branch),
        piAi: piAiEstimate.estimateContextTokens(llm),
        piAiPerMessage: llm.map((m) => piAiEstimate.estimateMessageTokens(m)),
      },
    });
  }
  return result;
}

function finish({ sm, dir, name }, leaves = [null]) {
  const file = sm.getSessionFile();
  const target = path.join(outDir, `${name}.jsonl`);
  fs.copyFileSync(file, target);
  const expected = dump(target, leaves);
  fs.writeFileSync(path.join(outDir, `${name}.expected.json`), `${JSON.stringify(expected, null, 2)}\n`);
  fs.rmSync(dir, { recursive: true, force: true });
  scenarios.push(name);
  console.log(`wrote ${name}.jsonl (${fs.readFileSync(target, "utf8").trim().split("\n").length} lines)`);
}

// ---- scenarios ------------------------------------------------------------

// Every entry type and every message role, with optional fields set and unset.
{
  const s = create("all-entries");
  const { sm } = s;
  sm.appendModelChange("faux", "faux-1");
  sm.appendThinkingLevelChange("medium");
  sm.appendMessage(system("You are a careful assistant.", { sections: { rules: "<rules>be brief</rules>", cwd: `cwd: ${CWD}` }, toolsAdded: [tool("read", "Read a file"), tool("bash", "Run a command")] }));
  const u1 = sm.appendMessage(user("Look at README.md and tell me about it. Ünïcødé 😀 included."));
  sm.appendMessage(
    assistant(
      [
        { type: "thinking", thinking: "The user wants a summary.", thinkingSignature: "sig-abc" },
        { type: "thinking", thinking: "", thinkingSignature: "opaque", redacted: true },
        { type: "text", text: "Reading it.", textSignature: "ts-1" },
        { type: "toolCall", id: "call_1", name: "read", arguments: { path: "README.md", limit: 20, ratio: 0.5, nested: { "2": "b", "1": "a", z: [1, 2.25, null, true] } } },
      ],
      { stopReason: "toolUse", usage: usage(1200, 80, { reasoning: 12 }) },
    ),
  );
  sm.appendMessage(toolResult("call_1", "read", "# notesoup\nA memory system.", { details: { lines: 2, truncated: false } }));
  sm.appendMessage({ role: "toolResult", toolCallId: "call_x", toolName: "screenshot", content: [{ type: "text", text: "see image" }, { type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" }], details: null, isError: true, timestamp: Date.now() });
  sm.appendMessage(assistant("It is a memory system.", { usage: usage(1500, 12) }));
  sm.appendMessage({ role: "user", content: [{ type: "text", text: "And this picture?" }, { type: "image", data: "R0lGODlh", mimeType: "image/gif" }], timestamp: Date.now() });
  sm.appendMessage(assistant("", { stopReason: "aborted", usage: ZERO_USAGE, errorMessage: "Request was aborted" }));
  sm.appendMessage(assistant([], { stopReason: "error", usage: ZERO_USAGE, errorMessage: "429 rate limited" }));
  sm.appendMessage({ role: "bashExecution", command: "ls", output: "a\nb", exitCode: 0, cancelled: false, truncated: false, fullOutputPath: undefined, timestamp: Date.now(), excludeFromContext: undefined });
  sm.appendMessage({ role: "bashExecution", command: "make", output: "", exitCode: 2, cancelled: false, truncated: true, fullOutputPath: "/tmp/out.txt", timestamp: Date.now(), excludeFromContext: undefined });
  sm.appendMessage({ role: "bashExecution", command: "sleep 9", output: "", exitCode: undefined, cancelled: true, truncated: false, fullOutputPath: undefined, timestamp: Date.now(), excludeFromContext: undefined });
  sm.appendMessage({ role: "bashExecution", command: "secret", output: "token", exitCode: 0, cancelled: false, truncated: false, fullOutputPath: undefined, timestamp: Date.now(), excludeFromContext: true });
  sm.appendCustomEntry("notesoup/state", { enabled: true, count: 3, ratio: 0.25 });
  sm.appendCustomEntry("notesoup/empty");
  sm.appendCustomMessageEntry("notesoup/guidance", "Hidden guidance text.", false, undefined);
  sm.appendCustomMessageEntry("ext/visible", [{ type: "text", text: "Visible block." }], true, { windowId: "pcw:0195f000:root", n: 1 });
  sm.appendCustomMessageEntry("ext/null-details", "x", true, null);
  sm.appendLabelChange(u1, "first question");
  sm.appendLabelChange(u1, "renamed");
  const a = sm.appendLabelChange(u1, "");
  sm.appendLabelChange(a, "label on a label");
  sm.appendLabelChange(a, undefined);
  sm.appendSessionInfo("Golden\r\nsession");
  sm.appendUsage("cache_warm", "faux", "faux-1", usage(0, 0, { cacheRead: 5000 }), "warm-up");
  sm.appendUsage("cache_warm", "faux", "faux-1", ZERO_USAGE);
  sm.appendMessage(system("", { sections: { rules: null, skills: "<skills>none</skills>" }, toolsRemoved: [{ name: "bash" }] }));
  sm.appendMessage(user("Thanks."));
  sm.appendMessage(assistant("You're welcome.", { usage: usage(1700, 5) }));
  finish(s);
}

// A tree: two branches, a branch summary, an empty summary, a second root.
{
  const s = create("branches");
  const { sm } = s;
  const u1 = sm.appendMessage(user("Start."));
  const a1 = sm.appendMessage(assistant("Started.", { usage: usage(50, 5) }));
  sm.appendMessage(user("Try approach A."));
  const aA = sm.appendMessage(assistant("A failed.", { usage: usage(80, 5) }));
  sm.branch(a1);
  sm.appendMessage(user("Try approach B."));
  const aB = sm.appendMessage(assistant("B works.", { usage: usage(90, 5) }));
  sm.branchWithSummary(a1, "Approach A failed; approach B works.", { readFiles: ["a.rs"], modifiedFiles: [] });
  sm.appendMessage(user("Continue after the summary."));
  const aC = sm.appendMessage(assistant("Continuing.", { usage: usage(120, 5) }));
  sm.branchWithSummary(u1, "", undefined, true);
  const aD = sm.appendMessage(assistant("Empty summary branch.", { usage: usage(60, 5) }));
  sm.resetLeaf();
  sm.appendMessage(user("A second root."));
  sm.appendMessage(assistant("Second root answer.", { usage: usage(30, 5) }));
  finish(s, [null, aA, aB, aC, aD, u1]);
}

// Ordinary compaction keeping a tail, with system messages in the kept range,
// then a second compaction whose kept range includes the first one.
{
  const s = create("compaction");
  const { sm } = s;
  sm.appendMessage(system("Base prompt.", { sections: { a: "<a>1</a>" }, toolsAdded: [tool("read", "Read a file")] }));
  sm.appendMessage(user("One."));
  sm.appendMessage(assistant("One done.", { usage: usage(400, 10) }));
  const keep = sm.appendMessage(user("Two."));
  sm.appendMessage(system("", { sections: { a: "<a>2</a>", b: "<b>new</b>" } }));
  sm.appendMessage(assistant("Two done.", { usage: usage(600, 10) }));
  sm.appendCompaction("Earlier: one was done.", keep, 610, { readFiles: ["x.md"], modifiedFiles: ["y.md"] });
  const keep2 = sm.appendMessage(user("Three."));
  sm.appendMessage(assistant("Three done.", { usage: usage(300, 10) }));
  finish(s, [null]);
  const s2 = create("compaction-twice");
  const sm2 = s2.sm;
  const first = sm2.appendMessage(user("Alpha."));
  sm2.appendMessage(assistant("Alpha done.", { usage: usage(200, 10) }));
  sm2.appendCompaction("Summary one.", first, 210, undefined, true);
  sm2.appendMessage(user("Beta."));
  sm2.appendMessage(assistant("Beta done.", { usage: usage(250, 10) }));
  sm2.appendCompaction("Summary two.", first, 260, { custom: "details" }, undefined, usage(260, 20));
  sm2.appendMessage(user("Gamma."));
  finish(s2, [null]);
  void keep2;
}

// Retain-none compaction (firstKeptEntryId = its own id) and a full notesoup
// reset boundary: checkpoint, marker, hidden boot, hidden continuation,
// visible reset prompt; then a second reset.
{
  const s = create("retain-none");
  const { sm } = s;
  const sessionId = sm.getSessionId();
  const s8 = sessionId.slice(0, 8);
  sm.appendMessage(system("Base prompt.", { toolsAdded: [tool("notes_write", "Write a note")] }));
  sm.appendCustomMessageEntry("notesoup/boot", "Root boot.", false, { windowId: `pcw:${s8}:root`, sessionId });
  sm.appendMessage(user("Work before the reset."));
  sm.appendMessage(assistant("Worked.", { usage: usage(900, 20) }));
  sm.appendCustomMessageEntry("notesoup/warning", "Context almost full.", false, undefined);
  const boundary = (windowId, origin, prompt) => {
    sm.appendCompaction("", null, 920, undefined, true);
    sm.appendCustomEntry("notesoup/reset-marker", { windowId, origin });
    sm.appendCustomMessageEntry("notesoup/boot", `Boot of ${windowId}.`, false, { windowId, sessionId });
    sm.appendCustomMessageEntry("notesoup/continuation", "You wake up blank, puffy-eyed, and clearly robbed.", false, undefined);
    if (prompt) sm.appendCustomMessageEntry("notesoup/reset-prompt", prompt, true, undefined);
  };
  boundary(`pcw:${s8}:aaaa1111`, "normal", "Carry on with the refactor.");
  const afterFirst = sm.appendMessage(assistant("Fresh window.", { usage: usage(300, 10) }));
  sm.appendMessage(user("More work."));
  sm.appendMessage(assistant("More done.", { usage: usage(500, 10) }));
  boundary(`pcw:${s8}:bbbb2222`, "forced");
  finish(s, [null, afterFirst]);
}

// Context edits: omission, replacement with a string and with blocks, two
// edits of one target (the last wins), an edit of a custom message, and an
// edit on another branch that must not apply.
{
  const s = create("context-edit");
  const { sm } = s;
  sm.appendMessage(system("Prompt."));
  const u1 = sm.appendMessage(user("Secret: hunter2."));
  const a1 = sm.appendMessage(assistant([{ type: "text", text: "Noted the secret." }, { type: "toolCall", id: "c1", name: "read", arguments: { path: "s.txt" } }], { stopReason: "toolUse", usage: usage(100, 10) }));
  const t1 = sm.appendMessage(toolResult("c1", "read", "a very long tool output"));
  const c1 = sm.appendCustomMessageEntry("ext/note", "Custom before edit.", true, undefined);
  const a2 = sm.appendMessage(assistant("Second.", { usage: usage(200, 10) }));
  const tip = sm.getLeafId();
  sm.appendContextEdit(u1, { content: "Secret: [redacted]." });
  sm.appendContextEdit(t1, { content: "[output omitted]" });
  sm.appendContextEdit(a1, { content: [{ type: "text", text: "First replacement." }] });
  sm.appendContextEdit(a1, { content: "Second replacement wins." });
  sm.appendContextEdit(c1, { content: [{ type: "text", text: "Custom after edit." }] });
  sm.appendContextEdit(a2, null);
  const edited = sm.appendMessage(user("After the edits."));
  sm.branch(tip);
  sm.appendMessage(user("On a branch without the edits."));
  finish(s, [null, edited]);
}

// A legacy pi-context marker with no checkpoint, and its boot.
{
  const s = create("legacy-marker");
  const { sm } = s;
  sm.appendMessage(system("Prompt.", { sections: { s: "<s>1</s>" }, toolsAdded: [tool("read", "Read")] }));
  sm.appendMessage(user("Old window work."));
  sm.appendMessage(assistant("Old answer.", { usage: usage(400, 10) }));
  sm.appendCustomEntry("pi-context/reset-marker", { windowId: "pcw:legacy:0001" });
  sm.appendMessage(system("", { sections: { s: "<s>2</s>" } }));
  sm.appendCustomMessageEntry("pi-context/boot", "Legacy boot.", false, { windowId: "pcw:legacy:0001" });
  sm.appendCustomMessageEntry("pi-context/continuation", "Legacy continuation.", false, undefined);
  sm.appendMessage(user("New window work."));
  sm.appendMessage(assistant("New answer.", { usage: usage(150, 10) }));
  finish(s);
}

// The resources of a golden session: the extensions `getExtensions`
// returns, and nothing else but a fixed system prompt.
function goldenResources(getExtensions) {
  return {
    getExtensions,
    getSkills: () => ({ skills: [], diagnostics: [] }),
    getPrompts: () => ({ prompts: [], diagnostics: [] }),
    getThemes: () => ({ themes: [], diagnostics: [] }),
    getAgentsFiles: () => ({ agentsFiles: [] }),
    getSystemPrompt: () => "You are the golden test agent.",
    getSystemPromptSource: () => undefined,
    getAppendSystemPrompt: () => [],
    getAppendSystemPromptSources: () => [],
    extendResources: () => {},
    reload: async () => {},
  };
}

// A golden agent session in Pi's real agent loop: the faux model, Pi's
// built-in tools off (`customTools` only, when given), compaction and
// retries off.
function goldenSession({ agentDir, faux, modelRuntime, getExtensions, sessionManager, customTools }) {
  return sdk.createAgentSession({
    cwd: CWD,
    agentDir,
    model: faux.getModel(),
    thinkingLevel: "off",
    modelRuntime,
    resourceLoader: goldenResources(getExtensions),
    noTools: "builtin",
    ...(customTools ? { customTools } : {}),
    sessionManager,
    settingsManager: sdk.SettingsManager.inMemory({ compaction: { enabled: false }, retry: { enabled: false } }),
  });
}

// Pi's faux provider (every token 1000 bytes long) registered in a model
// runtime whose auth file lives in `agentDir`.
async function fauxRuntime(agentDir) {
  const faux = piAi.fauxProvider({ api: "faux", tokenSize: { min: 1000, max: 1000 } });
  const modelRuntime = await sdk.ModelRuntime.create({ authPath: path.join(agentDir, "auth.json"), modelsPath: null, refreshOnCreate: false });
  modelRuntime.registerNativeProvider(faux.provider);
  return { faux, modelRuntime };
}

// Pi's real agent loop with the faux provider: the system message the first
// request persists, a tool call and its result from the loop, a follow-up
// turn, thinking-level and model changes made through the session.
{
  const s = create("agent-loop");
  const agentDir = fs.mkdtempSync(path.join(process.env.TMPDIR ?? "/tmp", "notesoup-agent-"));
  const { faux, modelRuntime } = await fauxRuntime(agentDir);
  const getExtensions = () => ({ extensions: [], errors: [], runtime: sdk.createExtensionRuntime() });
  const echo = {
    name: "echo",
    label: "Echo",
    description: "Echo the text back.",
    parameters: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
    execute: async (_id, params) => ({ content: [{ type: "text", text: `echo: ${params.text}` }], details: { length: params.text.length } }),
  };
  const { session } = await goldenSession({ agentDir, faux, modelRuntime, getExtensions, sessionManager: s.sm, customTools: [echo] });
  faux.setResponses([
    piAi.fauxAssistantMessage([piAi.fauxThinking("Use the tool."), piAi.fauxToolCall("echo", { text: "héllo 😀" }, { id: "call_echo_1" })], { stopReason: "toolUse" }),
    piAi.fauxAssistantMessage("The tool said: echo: héllo 😀"),
    piAi.fauxAssistantMessage("Second answer."),
  ]);
  await session.prompt("Please echo something.");
  await session.prompt("And once more.");
  session.dispose();
  fs.rmSync(agentDir, { recursive: true, force: true });
  finish(s);
}

// notesoup itself in Pi's real agent loop: the Pi package (its shim) loaded
// from plugins/notesoup-pi/package with the `notesoup-pi serve` sidecar from
// NOTESOUP_PI_BIN (window ids made sequential), the faux provider as the
// model. `notesoup-boundary`: a direct `wipe_memory`, committed at
// `turn_end` with the ordered boundary (retain-none checkpoint, marker,
// hidden boot, hidden continuation) and `continue: true`.
// `notesoup-settle`: `/fresh-window <text>`, committed at
// `agent_before_settle` with the visible reset prompt. Pi saves the drafts
// itself: `fromHook`, `tokensBefore`, the compaction's system message, the
// context-only continuation request.
async function notesoupScenario(name, { input, replies }) {
  const sidecar = process.env.NOTESOUP_PI_BIN;
  if (!sidecar) throw new Error("NOTESOUP_PI_BIN is not set (run `cargo xtask golden-pi`)");
  const s = create(name);
  const agentDir = fs.mkdtempSync(path.join(process.env.TMPDIR ?? "/tmp", "notesoup-agent-"));
  const notesHome = fs.mkdtempSync(path.join(process.env.TMPDIR ?? "/tmp", "notesoup-notes-"));
  Object.assign(process.env, {
    PI_NOTES_HOME: notesHome,
    PI_NOTES_AGENT: "tester",
    NOTESOUP_PI_WINDOW_IDS: "sequential",
  });
  const { faux, modelRuntime } = await fauxRuntime(agentDir);
  const runtime = sdk.createExtensionRuntime();
  const shim = path.resolve(outDir, "../../package/extensions/notesoup.ts");
  const loaded = await extensionLoader.loadExtensions([shim], CWD, sdk.createEventBus(), runtime);
  if (loaded.errors.length) throw new Error(JSON.stringify(loaded.errors));
  const getExtensions = () => ({ extensions: loaded.extensions, errors: [], runtime: loaded.runtime });
  const { session } = await goldenSession({ agentDir, faux, modelRuntime, getExtensions, sessionManager: s.sm });
  const errors = [];
  await session.bindExtensions({ uiContext: { notify: () => {} }, onError: (e) => errors.push(e) });
  faux.setResponses(replies());
  await session.prompt(input);
  // A command starts its run without awaiting it.
  await session.waitForIdle();
  await emitSessionShutdownEvent(session.extensionRunner, { type: "session_shutdown", reason: "quit" });
  if (errors.length) throw new Error(`${name}: ${JSON.stringify(errors)}`);
  if (faux.getPendingResponseCount() !== 0) throw new Error(`${name}: the script was not used up`);
  session.dispose();
  fs.rmSync(agentDir, { recursive: true, force: true });
  fs.rmSync(notesHome, { recursive: true, force: true });
  finish(s, [null]);
}
await notesoupScenario("notesoup-boundary", {
  input: "Please wipe.",
  replies: () => [
    piAi.fauxAssistantMessage([piAi.fauxToolCall("wipe_memory", {}, { id: "call_wipe_1" })], { stopReason: "toolUse" }),
    piAi.fauxAssistantMessage("Fresh window."),
  ],
});
await notesoupScenario("notesoup-settle", {
  input: "/fresh-window Carry on with the refactor.",
  replies: () => [piAi.fauxAssistantMessage("Notes saved."), piAi.fauxAssistantMessage("Carrying on with the refactor.")],
});

fs.writeFileSync(path.join(outDir, "scenarios.txt"), `${scenarios.join("\n")}\n`);
