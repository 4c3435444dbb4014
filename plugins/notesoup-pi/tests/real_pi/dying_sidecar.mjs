// A stand-in for `notesoup-pi serve` that dies in the middle of an event:
// it relays lines between the shim and the real sidecar until the first
// event named DIE_AT (an environment variable) arrives, then kills the
// sidecar and exits without answering, as a crash would.
//
// usage: node dying_sidecar.mjs REAL_NOTESOUP_PI serve

import { spawn } from "node:child_process";
import { createInterface } from "node:readline";

const [real, ...args] = process.argv.slice(2);
const dieAt = process.env.DIE_AT ?? "execute_tool";
const child = spawn(real, args, { stdio: ["pipe", "inherit", "inherit"] });
const lines = createInterface({ input: process.stdin });
lines.on("line", (line) => {
  const message = JSON.parse(line);
  if (message.type === "event" && message.body.name === dieAt) {
    child.kill("SIGKILL");
    process.exit(137);
  }
  child.stdin.write(`${line}\n`);
});
lines.on("close", () => child.stdin.end());
child.on("exit", (code) => process.exit(code ?? 1));
