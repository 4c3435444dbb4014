// notesoup's dreamer inside Pi: the jailed dream tools and nothing else.
//
// `notesoup-pi dream` runs `pi --mode json --no-extensions --extension
// <this file> --no-builtin-tools --tools read,grep,find,ls,write,edit,delete`
// in the notes home, with `NOTESOUP_PI_DREAMER` naming a JSON file
// `{command, home, tools}`: the `notesoup-pi` binary, the notes home and core's
// dream tool table. This extension registers those tools under their own
// names (so they stand in for Pi's built-ins of the same names, which are off)
// and forwards every call, one JSON line each, to `<command> dream-tools
// --notes-home <home>`, which applies core's jail. It is not one of the
// package's extensions: Pi loads it only for the dreamer.

import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { readFileSync } from "node:fs";

import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";

/** One dream tool as `notesoup-pi` describes it. */
interface DreamTool {
  name: string;
  description: string;
  parameters: unknown;
  sequential: boolean;
}

/** What `notesoup-pi dream` hands over through `NOTESOUP_PI_DREAMER`. */
interface DreamerConfig {
  command: string;
  home: string;
  tools: DreamTool[];
}

/** One answer line of `notesoup-pi dream-tools`. */
interface Answer {
  id: number;
  result?: { text: string; is_error: boolean };
  error?: { code: string; message: string };
}

function readConfig(): DreamerConfig {
  const file = process.env.NOTESOUP_PI_DREAMER;
  if (!file) {
    throw new Error("NOTESOUP_PI_DREAMER is not set: only `notesoup-pi dream` loads the dream extension");
  }
  const config = JSON.parse(readFileSync(file, "utf8")) as Partial<DreamerConfig>;
  if (typeof config.command !== "string" || typeof config.home !== "string" || !Array.isArray(config.tools)) {
    throw new Error(`${file} is not a dreamer configuration`);
  }
  return config as DreamerConfig;
}

/** The running `notesoup-pi dream-tools`, started at the first call. */
class ToolServer {
  private child: ChildProcessWithoutNullStreams | undefined;
  private buffer = "";
  private stderr = "";
  private nextId = 0;
  private readonly pending = new Map<number, { resolve: (a: Answer) => void; reject: (e: Error) => void }>();

  constructor(private readonly config: DreamerConfig) {}

  private start(): ChildProcessWithoutNullStreams {
    const child = spawn(this.config.command, ["dream-tools", "--notes-home", this.config.home], {
      stdio: ["pipe", "pipe", "pipe"],
    });
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk: string) => {
      this.buffer += chunk;
      let newline = this.buffer.indexOf("\n");
      while (newline >= 0) {
        const line = this.buffer.slice(0, newline);
        this.buffer = this.buffer.slice(newline + 1);
        newline = this.buffer.indexOf("\n");
        let answer: Answer;
        try {
          answer = JSON.parse(line) as Answer;
        } catch {
          continue;
        }
        const waiter = this.pending.get(answer.id);
        if (waiter) {
          this.pending.delete(answer.id);
          waiter.resolve(answer);
        }
      }
    });
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (chunk: string) => {
      this.stderr = (this.stderr + chunk).slice(-2000);
    });
    const fail = (error: Error) => {
      const why = this.stderr.trim().split("\n").pop();
      const failure = why ? new Error(`${error.message}: ${why}`) : error;
      for (const waiter of this.pending.values()) waiter.reject(failure);
      this.pending.clear();
      this.child = undefined;
    };
    child.on("error", fail);
    child.on("close", (code, signal) =>
      fail(new Error(`the dream tools exited (${signal ?? `code ${code}`})`)),
    );
    child.stdin.on("error", fail);
    return child;
  }

  call(name: string, args: unknown): Promise<Answer> {
    this.child ??= this.start();
    const id = ++this.nextId;
    const child = this.child;
    return new Promise<Answer>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      child.stdin.write(`${JSON.stringify({ id, op: "dream.tool", params: { name, arguments: args } })}\n`);
    });
  }

  stop(): void {
    this.child?.stdin.end();
    this.child = undefined;
  }
}

type Registered = Parameters<ExtensionAPI["registerTool"]>[0];

export default function dreamer(pi: ExtensionAPI): void {
  const config = readConfig();
  const server = new ToolServer(config);
  for (const tool of config.tools) {
    pi.registerTool({
      name: tool.name,
      label: tool.name,
      description: tool.description,
      parameters: tool.parameters as Registered["parameters"],
      executionMode: tool.sequential ? "sequential" : undefined,
      async execute(_toolCallId, params) {
        let answer: Answer;
        try {
          answer = await server.call(tool.name, params);
        } catch (error) {
          const text = error instanceof Error ? error.message : String(error);
          return { content: [{ type: "text", text }], details: {}, isError: true };
        }
        const text = answer.result?.text ?? answer.error?.message ?? "no answer";
        const isError = answer.result?.is_error ?? true;
        return { content: [{ type: "text", text }], details: {}, isError };
      },
    });
  }
  pi.on("session_shutdown", async () => {
    server.stop();
  });
}
