// Pi 1.6.0's own `AgentSession.getContextUsage()` at every leaf of session
// files, for comparison with the sidecar's computation of it.
//
// usage: node usage.mjs PLAN.json   (NOTESOUP_PI_NODE_MODULES must be set)
//
// The plan: {agentDir, cwd, sessionDir, contextWindow, files: [path...]}.
// For each file, Pi opens it (`SessionManager.open`) under an agent session
// whose model is pi-ai's faux model with that context window, moves the leaf
// to every entry in turn (`branch(id)`, then `resetLeaf()` for no leaf) and
// calls `session.getContextUsage()`. Opening a file under an agent session
// appends Pi's thinking level to it: give this copies. Stdout: [{file, leaves: [{leafId,
// usage}]}], `usage` null when Pi returns undefined.

import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

const plan = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
const nodeModules = process.env.NOTESOUP_PI_NODE_MODULES;
if (!nodeModules) throw new Error("NOTESOUP_PI_NODE_MODULES is not set");
const load = (rel) => import(pathToFileURL(path.join(nodeModules, rel)).href);
const sdk = await load("@earendil-works/pi-coding-agent/dist/index.js");
const piAi = await load("@earendil-works/pi-ai/dist/index.js");

fs.mkdirSync(plan.agentDir, { recursive: true });
const faux = piAi.fauxProvider({
  api: "faux",
  provider: "faux",
  models: [{ id: "faux-1", contextWindow: plan.contextWindow, maxTokens: 8192 }],
});
const modelRuntime = await sdk.ModelRuntime.create({
  authPath: path.join(plan.agentDir, "auth.json"),
  modelsPath: null,
  refreshOnCreate: false,
});
modelRuntime.registerNativeProvider(faux.provider);
const settingsManager = sdk.SettingsManager.create(plan.cwd, plan.agentDir);
const resourceLoader = new sdk.DefaultResourceLoader({
  cwd: plan.cwd,
  agentDir: plan.agentDir,
  settingsManager,
  noExtensions: true,
  noContextFiles: true,
  systemPrompt: "usage",
});
await resourceLoader.reload();

const out = [];
for (const file of plan.files) {
  const sessionManager = sdk.SessionManager.open(file, plan.sessionDir, plan.cwd);
  const { session } = await sdk.createAgentSession({
    cwd: plan.cwd,
    agentDir: plan.agentDir,
    model: faux.getModel(),
    thinkingLevel: "off",
    modelRuntime,
    resourceLoader,
    noTools: "builtin",
    sessionManager,
    settingsManager,
  });
  const leaves = [];
  const usageAt = (leafId) => leaves.push({ leafId, usage: session.getContextUsage() ?? null });
  for (const entry of sessionManager.getEntries()) {
    sessionManager.branch(entry.id);
    usageAt(entry.id);
  }
  sessionManager.resetLeaf();
  usageAt(null);
  session.dispose();
  out.push({ file, leaves });
}
process.stdout.write(JSON.stringify(out));
