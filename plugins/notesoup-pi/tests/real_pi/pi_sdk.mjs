// The set-up of real Pi 1.6.0's SDK that the scripts driving it share (the
// real-Pi tests' `driver.mjs` and `usage.mjs`, the benches' `resume.mjs` and
// `roundtrip.mjs`): Pi's modules loaded from NOTESOUP_PI_NODE_MODULES,
// pi-ai's faux model registered in a model runtime, Pi's settings and
// resources, and an agent session over them.

import { enableCompileCache } from "node:module";
import path from "node:path";
import { pathToFileURL } from "node:url";

// What Pi's own `pi` command does first: Node's compile cache for every
// module loaded after (the SDK's, about 1,600).
enableCompileCache();

/** A module of the installed Pi SDK: `rel` under NOTESOUP_PI_NODE_MODULES. */
export function load(rel) {
  const nodeModules = process.env.NOTESOUP_PI_NODE_MODULES;
  if (!nodeModules) throw new Error("NOTESOUP_PI_NODE_MODULES is not set");
  return import(pathToFileURL(path.join(nodeModules, rel)).href);
}

/** Pi's coding-agent SDK (`sdk`) and pi-ai (`piAi`). */
export async function loadPi() {
  return {
    sdk: await load("@earendil-works/pi-coding-agent/dist/index.js"),
    piAi: await load("@earendil-works/pi-ai/dist/index.js"),
  };
}

/**
 * pi-ai's faux provider with one model, `faux-1` with `model`'s figures
 * (`contextWindow`, `maxTokens`), and more provider `options`; and a model
 * runtime (its auth file in `agentDir`, no models file) it is registered in.
 */
export async function fauxModel({ sdk, piAi }, agentDir, model, options = {}) {
  const faux = piAi.fauxProvider({
    api: "faux",
    provider: "faux",
    models: [{ id: "faux-1", ...model }],
    ...options,
  });
  const modelRuntime = await sdk.ModelRuntime.create({
    authPath: path.join(agentDir, "auth.json"),
    modelsPath: null,
    refreshOnCreate: false,
  });
  modelRuntime.registerNativeProvider(faux.provider);
  return { faux, modelRuntime };
}

/**
 * Pi's settings for `cwd` and `agentDir`, and its resources loaded with
 * `options` (context files never); with `cwd` and `agentDir`, for
 * `fauxSession`.
 */
export async function loadResources(sdk, cwd, agentDir, options = {}) {
  const settingsManager = sdk.SettingsManager.create(cwd, agentDir);
  const resourceLoader = new sdk.DefaultResourceLoader({
    cwd,
    agentDir,
    settingsManager,
    noContextFiles: true,
    ...options,
  });
  await resourceLoader.reload();
  return { cwd, agentDir, settingsManager, resourceLoader };
}

/**
 * An agent session on the faux model of `fauxModel`, with the settings and
 * resources of `loadResources`, thinking off, without Pi's builtin tools;
 * `options` are the rest of `createAgentSession`'s (the `sessionManager`).
 */
export async function fauxSession(sdk, { faux, modelRuntime }, resources, options) {
  const { session } = await sdk.createAgentSession({
    model: faux.getModel(),
    thinkingLevel: "off",
    noTools: "builtin",
    modelRuntime,
    ...resources,
    ...options,
  });
  return session;
}
