// notesoup for Pi: a thin shim over the `notesoup-pi serve` sidecar.
//
// Everything notesoup decides happens in the sidecar. This file starts it as
// Pi loads the extension (the first `session_start` takes it; later ones
// start their own), registers the tools, commands and events the sidecar of
// this version names in its handshake (`ready.json`, kept equal to it by a
// test) while Pi loads, forwards them (one at a time, with the session
// state they read), performs the actions it asks for while it handles them,
// and stops it at `session_shutdown`. If the sidecar is missing or dies, Pi
// keeps working without notesoup, shows one notice, stops offering the
// memory tools and tells the agent once, before its next run, that they
// are unavailable and why; the next `session_start` tries again.
//
// The shim never keeps Pi's process alive: the child and its pipes are
// unref'd (stdout is held only while an answer is awaited), the sidecar is
// stopped when the process exits, and when the session goes away without a
// `session_shutdown` (an SDK host's `session.dispose()`), which the shim
// notices as its API turning stale.
//
// The protocol types come from the Rust definitions (`cargo xtask codegen`);
// `import type` is erased at load, so the installed package needs no
// generated file at run time.

import { execFileSync, spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

import {
  SettingsManager,
  VERSION,
  calculateContextTokens,
  estimateTokens,
  type BeforeAgentStartEventResult,
  type ExtensionAPI,
  type ExtensionContext,
} from "@earendil-works/pi-coding-agent";

import { idsHash, omit, summarize } from "./payload.ts";
import type {
  Action,
  ContextAppend,
  ContextEdit,
  OnDisk,
  Ready,
  SessionState,
  SettingsState,
  ShimMessage,
  SidecarMessage,
  ToolSpec,
} from "../../../../generated/notesoup-pi-bridge";

/** What the sidecar's mirror holds of Pi's session. */
interface Mirror {
  sessionId: string;
  /** How many entries it holds. */
  sent: number;
  /** Whether it asked for every entry on the line. */
  resend: boolean;
  /** The id of the last entry it holds. */
  lastId?: string;
  /** Whether Pi's entry count (distinct ids) equals its entries. */
  countable?: boolean;
}

type Sessions = ExtensionContext["sessionManager"];
type Entry = NonNullable<ReturnType<Sessions["getEntry"]>>;

/**
 * Pi's entry count, without the copy `getEntries()` makes: the read-only
 * type Pi hands extensions leaves `getEntryCount()` out, so it is used
 * when the object has it.
 */
function entryCount(sm: Sessions): number | undefined {
  const count = (sm as { getEntryCount?: () => unknown }).getEntryCount;
  if (typeof count !== "function") return undefined;
  const n: unknown = count.call(sm);
  return typeof n === "number" ? n : undefined;
}

/**
 * The entries Pi appended since the mirror's last one, oldest first, found
 * by walking up from the leaf instead of copying every entry (4-6 ms at
 * 100,000 entries); undefined when the walk cannot show that it found them
 * all, and the caller copies. Pi appends each entry as a child of one it
 * holds, so an entry below the mirror's last one was appended after it:
 * when the leaf's path reaches the mirror's last entry in exactly as many
 * steps as Pi has new entries, that path holds every new entry.
 */
function appendedSince(sm: Sessions, mirror: Mirror): Entry[] | undefined {
  if (!mirror.countable || mirror.lastId === undefined) return undefined;
  const count = entryCount(sm);
  if (count === undefined || count < mirror.sent) return undefined;
  const path: Entry[] = [];
  let id = sm.getLeafId();
  while (path.length < count - mirror.sent) {
    const entry = id ? sm.getEntry(id) : undefined;
    if (!entry) return undefined;
    path.push(entry);
    id = entry.parentId;
  }
  if (path.length > 0 && id !== mirror.lastId) return undefined;
  return path.reverse();
}

/** Must equal the sidecar's `PROTOCOL_VERSION`. */
const PROTOCOL = 7;

/** This package's folder (the shim lives in `extensions/`). */
const PACKAGE_DIR = join(dirname(fileURLToPath(import.meta.url)), "..");

/**
 * The prebuilt sidecar of the platform package npm installed beside this
 * one (`notesoup-<os>-<cpu>`, an optional dependency whose `os`/`cpu` match
 * this machine's; Node's `process.platform`/`process.arch` use npm's names).
 */
function platformSidecar(): string | undefined {
  try {
    const name = `notesoup-${process.platform}-${process.arch}`;
    const manifest = createRequire(join(PACKAGE_DIR, "package.json")).resolve(`${name}/package.json`);
    const binary = join(dirname(manifest), "bin", "notesoup-pi");
    return existsSync(binary) ? binary : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The sidecar: the platform package's, else `NOTESOUP_PI_BIN`, else
 * `sidecar.json` written by `notesoup-pi install`, else `notesoup-pi` on PATH.
 */
function sidecarCommand(): string {
  const fromPlatform = platformSidecar();
  if (fromPlatform) return fromPlatform;
  const fromEnv = process.env.NOTESOUP_PI_BIN;
  if (fromEnv) return fromEnv;
  const config = join(PACKAGE_DIR, "sidecar.json");
  if (existsSync(config)) {
    const parsed = JSON.parse(readFileSync(config, "utf8")) as { command?: unknown };
    if (typeof parsed.command === "string" && parsed.command) return parsed.command;
  }
  return "notesoup-pi";
}

/**
 * The handshake shipped with this package: the `ready` its sidecar answers
 * (`notesoup-pi`'s tests keep the file equal to it). Its tools, commands and
 * events are registered while Pi loads, which costs Pi no refresh of its
 * tools, and it serves each new sidecar from its hello on, so Pi waits for
 * no handshake; the sidecar's own is checked against it as it comes.
 * Without the file, the `session_start` exchange waits for the sidecar's
 * handshake, whose tools are registered as it comes.
 */
function shippedReady(): Ready | undefined {
  try {
    return JSON.parse(readFileSync(join(PACKAGE_DIR, "extensions", "ready.json"), "utf8")) as Ready;
  } catch {
    return undefined;
  }
}

/** This package's version: the sidecar must be the same. */
function packageVersion(): string | undefined {
  try {
    const parsed = JSON.parse(readFileSync(join(PACKAGE_DIR, "package.json"), "utf8")) as { version?: unknown };
    return typeof parsed.version === "string" ? parsed.version : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The notice for a sidecar of version `found` serving this package of
 * version `wanted`: both versions and the two ways out.
 */
function mismatchText(command: string, found: string | undefined, wanted: string): string {
  return (
    `${command} is version ${found ?? "unknown"} but the notesoup-pi Pi package is ${wanted}; ` +
    `install matching versions: \`pi install npm:notesoup-pi@${found ?? "<version>"}\`, ` +
    `or a notesoup-pi binary of version ${wanted} (\`cargo install notesoup-pi --version ${wanted}\`)`
  );
}

/**
 * Why a sidecar whose handshake failed cannot serve this package, when its
 * `--version` is another version than this package's: a release that speaks
 * another protocol says so only there. Run only on that failure path; the
 * handshake carries the version of a sidecar that answers it.
 */
function versionMismatch(command: string): string | undefined {
  const wanted = packageVersion();
  if (wanted === undefined) return undefined;
  try {
    const line = execFileSync(command, ["--version"], {
      encoding: "utf8",
      timeout: 10_000,
      stdio: ["ignore", "pipe", "pipe"],
    });
    // `notesoup-pi 0.1.0 (Pi 1.6.0, bridge protocol 2)`: the second word.
    const found = line.trim().split(/\s+/)[1];
    return found === wanted ? undefined : mismatchText(command, found, wanted);
  } catch {
    return undefined;
  }
}

/** A pipe or process handle Node can be told not to wait for. */
type Handle = { ref?: () => void; unref?: () => void };

/** One running `notesoup-pi serve` and its line-by-line reader. */
class Sidecar {
  private lines: string[] = [];
  private waiting: Array<{ resolve: (line: string) => void; reject: (error: Error) => void }> = [];
  private buffer = "";
  private stderr = "";
  private exited: Error | undefined;
  /** Stops the child when Pi's process exits, whatever it was doing. */
  private readonly onExit = () => this.stop();

  private constructor(
    readonly command: string,
    private readonly child: ChildProcessWithoutNullStreams,
  ) {
    // Pi's process may end while the sidecar idles: nothing here holds it.
    (child as Handle).unref?.();
    for (const pipe of [child.stdin, child.stdout, child.stderr]) (pipe as Handle).unref?.();
    process.once("exit", this.onExit);
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk: string) => {
      this.buffer += chunk;
      let newline = this.buffer.indexOf("\n");
      while (newline >= 0) {
        const line = this.buffer.slice(0, newline);
        this.buffer = this.buffer.slice(newline + 1);
        const waiter = this.waiting.shift();
        if (waiter) waiter.resolve(line);
        else this.lines.push(line);
        this.holdWhileAwaited();
        newline = this.buffer.indexOf("\n");
      }
    });
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (chunk: string) => {
      // Only the tail matters: it says why the sidecar stopped.
      this.stderr = (this.stderr + chunk).slice(-2000);
    });
    const fail = (error: Error) => {
      if (this.exited) return;
      const why = this.stderr.trim().split("\n").pop();
      this.exited = why ? new Error(`${error.message}: ${why}`) : error;
      for (const waiter of this.waiting.splice(0)) waiter.reject(this.exited);
      this.holdWhileAwaited();
      process.off("exit", this.onExit);
    };
    child.on("error", fail);
    child.on("close", (code, signal) =>
      fail(new Error(`the sidecar exited (${signal ?? `code ${code}`})`)),
    );
    // A line written to a sidecar that stopped reading fails (`EPIPE`); its
    // exit, once its last output is read, fails the waits, so an answer it
    // gave first (a refused handshake) is still read.
    child.stdin.on("error", () => undefined);
  }

  /**
   * Starts the sidecar found and greets it: its answer waits in the line
   * buffer until [`next`] reads it, so a sidecar started while Pi loads
   * is ready by the time the session starts.
   */
  static start(): Sidecar {
    const command = sidecarCommand();
    const started = new Sidecar(command, spawn(command, ["serve"], { stdio: ["pipe", "pipe", "pipe"] }));
    started.send({ type: "hello", body: { protocol: PROTOCOL, piVersion: VERSION } });
    return started;
  }

  send(message: ShimMessage): void {
    if (this.exited) throw this.exited;
    this.child.stdin.write(`${JSON.stringify(message)}\n`);
  }

  async next(): Promise<SidecarMessage> {
    const line =
      this.lines.shift() ??
      (await new Promise<string>((resolve, reject) => {
        if (this.exited) reject(this.exited);
        else {
          this.waiting.push({ resolve, reject });
          this.holdWhileAwaited();
        }
      }));
    return JSON.parse(line) as SidecarMessage;
  }

  /**
   * Holds Pi's process only while an answer is awaited: its output pipe,
   * and the child itself, so that a sidecar dying meanwhile is seen (its
   * exit is what fails the wait).
   */
  private holdWhileAwaited(): void {
    const handles = [this.child.stdout as Handle, this.child as Handle];
    const hold = this.waiting.length > 0 && !this.exited;
    for (const handle of handles) {
      if (hold) handle.ref?.();
      else handle.unref?.();
    }
  }

  stop(): void {
    process.off("exit", this.onExit);
    this.child.stdin.end();
    this.child.kill();
  }
}

export default function notesoup(pi: ExtensionAPI): void {
  let sidecar: Sidecar | undefined;
  let ready: Ready | undefined;
  /** Why notesoup is off until the next `session_start`, once shown. */
  let unavailable: string | undefined;
  /**
   * The mirror the sidecar holds: session id and how many entries it has;
   * `resend` when it asked for every entry on the line.
   */
  let mirror: Mirror = { sessionId: "", sent: 0, resend: false };
  let nextEvent = 0;
  /** Events run one at a time: Pi awaits handlers, but tools may run in parallel. */
  let queue: Promise<unknown> = Promise.resolve();
  const subscribed = new Set<string>(["session_start", "session_shutdown", "before_agent_start"]);
  /**
   * The on-demand events subscribed to now, with the function that drops
   * each: Pi skips its own work for an event nobody handles.
   */
  const onDemand = new Map<string, () => void>();
  /** The on-demand events the newest result asked for. */
  let wanted: readonly string[] = [];
  /**
   * `turn_end` is held for the running turn by its own messages (see
   * `messageEnd`), whatever the sidecar asked for.
   */
  let turnHold = false;
  /**
   * The running turn's context tokens as Pi's `getContextUsage()` counts
   * them (the reply's usage, then the estimate of each message after it);
   * `undefined` before a reply.
   */
  let turnTokens: number | undefined;
  /** The newest result's `turnEndAt`: a turn reaching it holds `turn_end`. */
  let turnEndAt = 0;
  /**
   * The newest `session_start` exchange (the mirror reading the session
   * file, the window's boot appended), which Pi does not wait for; a run
   * waits for it before it starts (`before_agent_start`), and every other
   * exchange queues behind it.
   */
  let starting: Promise<void> = Promise.resolve();
  /** Whether the agent was told this session that its memory tools are off. */
  let toldAgent = false;
  /** Watches for the session going away without a `session_shutdown`. */
  let staleWatch: ReturnType<typeof setInterval> | undefined;
  const registeredTools = new Set<string>();
  const registeredCommands = new Set<string>();
  /** The tools taken out of Pi's active ones while notesoup is unavailable. */
  let hiddenTools: string[] = [];
  /**
   * The sidecar started while Pi loads, greeted and answering while Pi opens
   * the session; the first `session_start` takes it. Pi's process never
   * waits for it (see [`Sidecar`]); a failure to start shows at that
   * `session_start`.
   */
  let early: Sidecar | undefined;
  try {
    early = Sidecar.start();
  } catch {
    early = undefined;
  }
  const shipped = shippedReady();
  if (shipped) register(shipped, false);

  function settings(ctx: ExtensionContext): SettingsState {
    try {
      // Pi's effective settings (project over global, the project only when
      // trusted) and its own resolution of the compaction settings.
      const merged = pi.getSettings();
      const compaction = SettingsManager.inMemory(merged).getCompactionSettings(ctx.model);
      return { global: merged, project: {}, compaction };
    } catch (error) {
      return { global: {}, project: {}, error: String(error) };
    }
  }

  /** Pi's usage estimate; unknown (not fatal) when Pi cannot compute it. */
  function contextUsage(ctx: ExtensionContext): unknown {
    try {
      return ctx.getContextUsage();
    } catch {
      return undefined;
    }
  }

  /**
   * How an event's state treats the context usage: Pi's value (`"pi"`), left
   * out (`"omitted"`: its handlers never read it), or left to the sidecar
   * (`"local"`: it computes Pi's `getContextUsage()` from its mirror). Under a
   * virtual model Pi takes the limits of the model that answered, which only
   * Pi knows: then Pi's value.
   */
  function usageMode(name: string, ctx: ExtensionContext): "pi" | "omitted" | "local" {
    if (!ready) return "pi";
    if ((ready.usageOmitted ?? []).includes(name)) return "omitted";
    if ((ready.usageComputed ?? []).includes(name) && ctx.model && ctx.model.api !== "pi-virtual") {
      return "local";
    }
    return "pi";
  }

  function state(ctx: ExtensionContext, usage: "pi" | "omitted" | "local" = "pi"): SessionState {
    const sm = ctx.sessionManager;
    const sessionId = sm.getSessionId();
    const appended = sessionId === mirror.sessionId ? appendedSince(sm, mirror) : undefined;
    if (appended) {
      const from = mirror.sent;
      const last = appended[appended.length - 1];
      mirror = { ...mirror, sent: from + appended.length, lastId: last ? last.id : mirror.lastId };
      return sessionState(ctx, sessionId, from, appended, undefined, usage);
    }
    const entries = sm.getEntries();
    const known = sessionId === mirror.sessionId && entries.length >= mirror.sent;
    let from = known ? mirror.sent : 0;
    // A mirror starting over reads what Pi has written to the session file
    // (every entry, once the session has a conversation: Pi appends each one
    // as it adds it) instead of taking it on the line; the sidecar checks the
    // file and asks for the entries (`resendEntries`) when it does not hold
    // them.
    const file = sm.getSessionFile();
    let onDisk: OnDisk | undefined;
    if (!known && !mirror.resend && entries.length > 0 && file && existsSync(file)) {
      onDisk = {
        count: entries.length,
        lastId: entries[entries.length - 1].id,
        idsHash: idsHash(entries),
      };
      from = entries.length;
    }
    mirror = {
      sessionId,
      sent: entries.length,
      resend: false,
      lastId: entries.length > 0 ? entries[entries.length - 1].id : undefined,
      // Pi counts distinct ids; the count stands for the entries only
      // while no id repeats.
      countable: entryCount(sm) === entries.length,
    };
    return sessionState(ctx, sessionId, from, entries.slice(from), onDisk, usage);
  }

  function sessionState(
    ctx: ExtensionContext,
    sessionId: string,
    from: number,
    entries: unknown[],
    onDisk: OnDisk | undefined,
    usage: "pi" | "omitted" | "local",
  ): SessionState {
    const sm = ctx.sessionManager;
    const file = sm.getSessionFile();
    const model = ctx.model;
    return {
      sessionId,
      header: sm.getHeader() ?? null,
      entriesFrom: from,
      entries,
      onDisk,
      leafId: sm.getLeafId() ?? undefined,
      cwd: ctx.cwd,
      sessionFile: file,
      idle: ctx.isIdle(),
      pendingMessages: ctx.hasPendingMessages(),
      signalAborted: ctx.signal?.aborted ?? false,
      // Pi computes it over the whole branch: only for the events that read
      // it and whose usage the sidecar cannot compute.
      contextUsage: usage === "pi" ? contextUsage(ctx) : undefined,
      usageLocal: usage === "local" ? true : undefined,
      model: model && {
        provider: model.provider,
        id: model.id,
        contextWindow: model.contextWindow ?? 0,
        maxTokens: model.maxTokens ?? 0,
      },
      settings: settings(ctx),
      projectTrusted: ctx.isProjectTrusted(),
    };
  }

  function perform(action: Action, ctx: ExtensionContext): string | undefined {
    try {
      switch (action.kind) {
        case "appendEntry":
          pi.appendEntry(action.args.customType, action.args.data);
          break;
        case "sendMessage":
          // Never awaited: a run it starts must not wait for this handler.
          pi.sendMessage(
            action.args.message as Parameters<ExtensionAPI["sendMessage"]>[0],
            action.args.options as Parameters<ExtensionAPI["sendMessage"]>[1],
          );
          break;
        case "notify":
          ctx.ui.notify(action.args.message, action.args.level);
          break;
        case "abort":
          ctx.abort();
          break;
        case "resendEntries":
          // The answer's state carries every entry.
          mirror = { sessionId: "", sent: 0, resend: true };
          break;
      }
      return undefined;
    } catch (error) {
      return error instanceof Error ? error.message : String(error);
    }
  }

  function giveUp(why: string, ctx: ExtensionContext | undefined): void {
    stop();
    offerTools(false);
    if (unavailable === undefined) {
      unavailable = why;
      ctx?.ui.notify(`notesoup unavailable: ${why}`, "warning");
    }
  }

  /** One exchange: the event, the actions it asks for, its result. */
  async function exchange(name: string, payload: unknown, ctx: ExtensionContext): Promise<unknown> {
    const current = sidecar;
    if (!current || !ready) return undefined;
    const id = ++nextEvent;
    const omitted = ready.omit.find((rule) => rule.event === name);
    const summarized = ready.summarize.find((rule) => rule.event === name);
    const trimmed = omitted ? omit(payload, omitted.paths) : payload;
    const body = summarized ? summarize(trimmed, summarized) : trimmed;
    const usage = usageMode(name, ctx);
    current.send({ type: "event", body: { id, name, payload: body, state: state(ctx, usage) } });
    for (;;) {
      const message = await current.next();
      // Stopped meanwhile (its handshake refused, say): none of its lines
      // is acted on.
      if (sidecar !== current) return undefined;
      if (message.type === "action") {
        const error = perform(message.body.action, ctx);
        current.send({
          type: "actionResult",
          body: { id: message.body.id, error, state: state(ctx, usage) },
        });
      } else if (message.type === "result" && message.body.id === id) {
        if (message.body.onDemand) {
          turnEndAt = message.body.turnEndAt ?? 0;
          demand(message.body.onDemand);
        }
        if (message.body.error) throw new HandlerError(message.body.error);
        return message.body.value ?? undefined;
      } else {
        throw new Error(`protocol error: unexpected ${message.type}`);
      }
    }
  }

  /** Queues an exchange; a broken sidecar turns notesoup off, Pi carries on. */
  function forward(name: string, payload: unknown, ctx: ExtensionContext): Promise<unknown> {
    const run = queue.then(async () => {
      try {
        return await exchange(name, payload, ctx);
      } catch (error) {
        if (error instanceof HandlerError) throw error;
        giveUp(error instanceof Error ? error.message : String(error), ctx);
        return undefined;
      }
    });
    queue = run.catch(() => undefined);
    return run;
  }

  /**
   * Registers `spec`'s tools, commands and events; names already registered
   * are registered again only when `replace` (a handshake that differs from
   * the shipped one).
   */
  function register(spec: Ready, replace: boolean): void {
    for (const tool of spec.tools) {
      if (registeredTools.has(tool.name) && !replace) continue;
      registeredTools.add(tool.name);
      registerTool(tool);
    }
    for (const command of spec.commands) {
      if (registeredCommands.has(command.name) && !replace) continue;
      registeredCommands.add(command.name);
      const choices = command.arguments ?? [];
      pi.registerCommand(command.name, {
        description: command.description,
        // The arguments the sidecar names, offered after `/name `.
        getArgumentCompletions: (prefix) => {
          const typed = prefix.trimStart().toLowerCase();
          const items = choices
            .filter((choice) => choice.startsWith(typed))
            .map((choice) => ({ value: choice, label: choice }));
          return items.length > 0 ? items : null;
        },
        handler: async (args, ctx) => {
          // A command typed as the session starts waits for its handshake.
          await starting;
          if (!ready) {
            ctx.ui.notify(`notesoup unavailable: ${unavailable ?? "the sidecar is not running"}`, "warning");
            return;
          }
          await forward("command", { name: command.name, args }, ctx);
        },
      });
    }
    for (const event of spec.events) {
      if (subscribed.has(event) || (spec.onDemand ?? []).includes(event)) continue;
      subscribed.add(event);
      subscribe(event);
    }
    // Held once, for the extension's life, answered by the shim alone.
    if (!subscribed.has("message_end") && (spec.onDemand ?? []).includes("turn_end")) {
      subscribed.add("message_end");
      pi.on("message_end", (event) => messageEnd(event.message));
    }
  }

  /**
   * `message_end`, answered by the shim alone (no exchange) while the
   * sidecar takes `turn_end` on demand: counts the turn's context tokens
   * and holds `turn_end` for the turn once they reach the sidecar's
   * `turnEndAt` (the reserve may be crossed), or when its reply did not
   * complete (an overflow, an error, an abort, a cut reply), or carries no
   * usage. Pi ends the turn after its reply's and every tool result's
   * `message_end`.
   */
  function messageEnd(message: Parameters<typeof estimateTokens>[0]): undefined {
    if (!ready || !(ready.onDemand ?? []).includes("turn_end")) return undefined;
    if (message.role === "assistant") {
      const completed = message.stopReason === "stop" || message.stopReason === "toolUse";
      const used = completed && message.usage ? calculateContextTokens(message.usage) : 0;
      turnTokens = used > 0 ? used : Number.POSITIVE_INFINITY;
    } else if (turnTokens !== undefined) {
      turnTokens += estimateTokens(message);
    }
    if (!turnHold && turnTokens !== undefined && turnTokens >= turnEndAt) {
      turnHold = true;
      demand(wanted);
    }
    return undefined;
  }

  /** Subscribes to `event`; returns the function that drops the handler. */
  function subscribe(event: string): () => void {
    // Each event's payload and result are Pi's own shapes; the sidecar
    // decodes them, so one generic handler serves every event.
    const on = pi.on as (
      name: string,
      handler: (event: unknown, ctx: ExtensionContext) => unknown,
    ) => (() => void) | void;
    const off = on(event, (payload, ctx) =>
      // A sidecar that does not name the event (the shipped handshake
      // names it) does not get it.
      ready && !ready.events.includes(event)
        ? undefined
        : event === "context"
          ? context(payload, ctx)
          : event === "context_with_system"
            ? contextWithSystem(payload, ctx)
            : event === "turn_end"
              ? turnEnd(payload, ctx)
              : forward(event, payload, ctx),
    );
    return typeof off === "function" ? off : () => {};
  }

  /**
   * `turn_end`: the turn's hold ends with it; the result says whether the
   * sidecar needs the next one.
   */
  function turnEnd(payload: unknown, ctx: ExtensionContext): Promise<unknown> {
    turnHold = false;
    turnTokens = undefined;
    return forward("turn_end", payload, ctx);
  }

  /**
   * Holds a handler for exactly the on-demand events in `asked` (a
   * result's `onDemand`; `[]` drops them all), and `turn_end` while the
   * running turn holds it.
   */
  function demand(asked: readonly string[]): void {
    wanted = asked;
    const all = turnHold && !asked.includes("turn_end") ? [...asked, "turn_end"] : asked;
    for (const [event, off] of onDemand) {
      if (!all.includes(event)) {
        off();
        onDemand.delete(event);
      }
    }
    for (const event of all) {
      if (onDemand.has(event) || !(ready?.onDemand ?? []).includes(event)) continue;
      onDemand.set(event, subscribe(event));
    }
  }

  /**
   * `context`: sent without its messages (an `omit` rule); the sidecar
   * answers the messages to add after them (`{append}`) or nothing, and Pi
   * gets its own messages followed by those.
   */
  async function context(payload: unknown, ctx: ExtensionContext): Promise<unknown> {
    const result = (await forward("context", payload, ctx)) as ContextAppend | undefined;
    if (!result?.append?.length) return undefined;
    const messages = (payload as { messages?: unknown[] }).messages ?? [];
    return { messages: [...messages, ...result.append] };
  }

  /**
   * `context_with_system`: sent with its messages summarised (a `summarize`
   * rule); the sidecar answers an edit (`{head, keep}`) or nothing, and Pi
   * gets the head followed by the kept ranges of its own messages.
   */
  async function contextWithSystem(payload: unknown, ctx: ExtensionContext): Promise<unknown> {
    const result = (await forward("context_with_system", payload, ctx)) as ContextEdit | undefined;
    if (!result) return undefined;
    const messages = (payload as { messages?: unknown[] }).messages ?? [];
    const kept = result.keep.flatMap((range) => messages.slice(range.from, range.to));
    return { messages: result.head === undefined || result.head === null ? kept : [result.head, ...kept] };
  }

  function registerTool(tool: ToolSpec): void {
    pi.registerTool({
      name: tool.name,
      label: tool.label,
      description: tool.description,
      promptSnippet: tool.promptSnippet,
      promptGuidelines: tool.promptGuidelines,
      parameters: tool.parameters as Parameters<ExtensionAPI["registerTool"]>[0]["parameters"],
      outputSchema: tool.outputSchema as Parameters<ExtensionAPI["registerTool"]>[0]["outputSchema"],
      executionMode: tool.executionMode,
      async execute(toolCallId, params, _signal, _onUpdate, ctx) {
        if (!ready) throw new Error(`notesoup unavailable: ${unavailable ?? "the sidecar is not running"}`);
        const result = await forward("execute_tool", { toolCallId, name: tool.name, params }, ctx);
        if (result === undefined) throw new Error(`notesoup unavailable: ${unavailable ?? "no result"}`);
        return result as Awaited<ReturnType<Parameters<ExtensionAPI["registerTool"]>[0]["execute"]>>;
      },
    });
  }

  /**
   * Whether Pi has made this extension's API stale: the session it served
   * was disposed or replaced (an SDK host's `session.dispose()` emits no
   * `session_shutdown`).
   */
  function stale(): boolean {
    try {
      pi.getActiveTools();
      return false;
    } catch (error) {
      return /stale/i.test(error instanceof Error ? error.message : String(error));
    }
  }

  function stop(): void {
    sidecar?.stop();
    sidecar = undefined;
    turnHold = false;
    turnTokens = undefined;
    turnEndAt = 0;
    demand([]);
    ready = undefined;
    if (staleWatch !== undefined) clearInterval(staleWatch);
    staleWatch = undefined;
  }

  /**
   * Takes notesoup's tools out of Pi's active ones (`offer` false: notesoup
   * is unavailable, the agent is told so), or puts back those it took out.
   */
  function offerTools(offer: boolean): void {
    try {
      if (offer) {
        const active = pi.getActiveTools();
        const back = hiddenTools.filter((name) => registeredTools.has(name) && !active.includes(name));
        hiddenTools = [];
        if (back.length > 0) pi.setActiveTools([...active, ...back]);
      } else {
        hiddenTools = [...hiddenTools, ...deactivate((name) => registeredTools.has(name))];
      }
    } catch {
      // The session went away: nothing is offered to anyone.
    }
  }

  /** Takes the tools `drop` picks out of Pi's active ones; returns them. */
  function deactivate(drop: (name: string) => boolean): string[] {
    const active = pi.getActiveTools();
    const dropped = active.filter(drop);
    if (dropped.length > 0) pi.setActiveTools(active.filter((name) => !drop(name)));
    return dropped;
  }

  /** Stops the sidecar once the session goes away by a path with no event. */
  function watchForStale(): void {
    if (staleWatch !== undefined) clearInterval(staleWatch);
    staleWatch = setInterval(() => {
      if (stale()) stop();
    }, 1000);
    // The watch itself never holds Pi's process.
    staleWatch.unref();
  }

  /**
   * Starts the session's sidecar (the one started while Pi loaded, first)
   * and returns the check of its handshake. With the shipped handshake the
   * sidecar is served from its hello on: the `session_start` exchange
   * follows the hello on the line at once, and its answer is read after the
   * handshake's. A handshake that refuses or names another version turns
   * notesoup off before any later line of that sidecar is acted on.
   */
  function start(ctx: ExtensionContext): Promise<void> {
    stop();
    unavailable = undefined;
    toldAgent = false;
    mirror = { sessionId: "", sent: 0, resend: false };
    let started: Sidecar;
    try {
      started = early ?? Sidecar.start();
    } catch (error) {
      giveUp(error instanceof Error ? error.message : String(error), ctx);
      return Promise.resolve();
    }
    early = undefined;
    sidecar = started;
    if (shipped) ready = shipped;
    return handshake(started, ctx);
  }

  async function handshake(started: Sidecar, ctx: ExtensionContext): Promise<void> {
    try {
      const answer = await started.next();
      if (sidecar !== started) return;
      if (answer.type === "ready" && answer.body.protocol === PROTOCOL) {
        const wanted = packageVersion();
        if (wanted !== undefined && answer.body.version !== wanted) {
          giveUp(mismatchText(started.command, answer.body.version, wanted), ctx);
          return;
        }
      } else {
        giveUp(
          versionMismatch(started.command) ??
            (answer.type === "refused"
              ? answer.body.message
              : `the sidecar speaks another protocol (${JSON.stringify(answer).slice(0, 200)})`),
          ctx,
        );
        return;
      }
      if (!shipped) {
        ready = answer.body;
        register(answer.body, false);
      } else if (JSON.stringify(answer.body) !== JSON.stringify(shipped)) {
        // A sidecar built from other sources than the package: its own
        // handshake, and none of the shipped tools it does not name.
        ready = answer.body;
        register(answer.body, true);
        const named = new Set(answer.body.tools.map((tool) => tool.name));
        const gone = [...registeredTools].filter((name) => !named.has(name));
        for (const name of gone) registeredTools.delete(name);
        deactivate((name) => gone.includes(name));
      }
      offerTools(true);
      watchForStale();
    } catch (error) {
      if (sidecar !== started) return;
      const why = error instanceof Error ? error.message : String(error);
      giveUp(versionMismatch(started.command) ?? why, ctx);
    }
  }

  // Pi waits for neither the sidecar's handshake nor the exchange: on a long
  // session the mirror reads the whole file (about 45 ms at 100,000
  // entries), and Pi can be ready for input meanwhile. The exchange follows
  // the hello at once when the shipped handshake serves the sidecar, else
  // the handshake (whose tools are registered then). The boot the exchange
  // appends while Pi is idle lands as before; while a run starts, Pi holds
  // it and adds it before the run's messages.
  pi.on("session_start", (event, ctx) => {
    const begun = queue.then(() => {
      const checked = start(ctx);
      return shipped ? undefined : checked;
    });
    queue = begun.catch(() => undefined);
    starting = forward("session_start", event, ctx).then(
      () => undefined,
      (error: unknown) => {
        try {
          ctx.ui.notify(error instanceof Error ? error.message : String(error), "error");
        } catch {
          // The session went away meanwhile: nobody is left to tell.
        }
      },
    );
  });

  pi.on("session_shutdown", async (event, ctx) => {
    await forward("session_shutdown", event, ctx);
    stop();
  });

  // Without a sidecar the agent is told once, before its next run, that its
  // memory tools are unavailable and why; with one, the event is the
  // sidecar's when it asked for it.
  pi.on("before_agent_start", async (event, ctx): Promise<BeforeAgentStartEventResult | undefined> => {
    // The window's boot goes before the run's messages.
    await starting;
    if (!ready) {
      if (unavailable === undefined || toldAgent) return undefined;
      toldAgent = true;
      return {
        message: {
          customType: "notesoup-unavailable",
          content:
            `notesoup is unavailable in this session (${unavailable}): your memory tools ` +
            "(notes_*, history_*) are not offered, and nothing you do now is kept in notes. " +
            "Work without them; the user can fix notesoup and start a new session.",
          display: false,
        },
      };
    }
    if (!ready.events.includes("before_agent_start")) return undefined;
    return (await forward("before_agent_start", event, ctx)) as BeforeAgentStartEventResult | undefined;
  });
}

/** The sidecar's handler failed: Pi reports it as the handler's error. */
class HandlerError extends Error {}
