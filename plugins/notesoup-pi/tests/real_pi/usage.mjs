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

import { fauxModel, fauxSession, loadPi, loadResources } from "./pi_sdk.mjs";

const plan = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
const pi = await loadPi();
const { sdk } = pi;

fs.mkdirSync(plan.agentDir, { recursive: true });
const model = await fauxModel(pi, plan.agentDir, {
  contextWindow: plan.contextWindow,
  maxTokens: 8192,
});
const resources = await loadResources(sdk, plan.cwd, plan.agentDir, {
  noExtensions: true,
  systemPrompt: "usage",
});

const out = [];
for (const file of plan.files) {
  const sessionManager = sdk.SessionManager.open(file, plan.sessionDir, plan.cwd);
  const session = await fauxSession(sdk, model, resources, { sessionManager });
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
