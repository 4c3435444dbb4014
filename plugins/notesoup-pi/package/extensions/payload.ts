// The payload helpers the shim applies before a line goes to the sidecar,
// in a module of their own so that the sidecar bench (`bench/sidecar.mjs`,
// plain Node, which strips the types) sends exactly what the shim sends.

import type { MessageSummaryRule } from "../../../../generated/notesoup-pi-bridge";

/**
 * A copy of `payload` without the dotted `paths`; objects along a path are
 * copied, so Pi's own event object is never changed.
 */
export function omit(payload: unknown, paths: string[]): unknown {
  let result = payload;
  for (const path of paths) {
    const keys = path.split(".");
    const strip = (value: unknown, depth: number): unknown => {
      if (typeof value !== "object" || value === null || Array.isArray(value)) return value;
      const copy: Record<string, unknown> = { ...(value as Record<string, unknown>) };
      const key = keys[depth];
      if (depth === keys.length - 1) delete copy[key];
      else if (key in copy) copy[key] = strip(copy[key], depth + 1);
      return copy;
    };
    result = strip(result, 0);
  }
  return result;
}

/**
 * A copy of `payload` whose `rule.list` messages are summarised: each holds
 * only the rule's dotted `fields` (an absent one stays absent), except a
 * message of one of `rule.wholeRoles`, which is kept whole, and a message
 * of one of `rule.plainRoles`, of which the sidecar reads nothing else,
 * which becomes that role's index there (most of a long context's
 * messages: a number costs far less to build, write and read than an
 * object). Written with plain indexed loops: Pi calls it once a request,
 * so it mostly runs before V8 optimizes it, where iterators, closures and
 * copies per message cost several times more (5-6 ms for 5,000 messages
 * against 1.4 ms).
 */
export function summarize(payload: unknown, rule: MessageSummaryRule): unknown {
  if (typeof payload !== "object" || payload === null) return payload;
  const source = payload as Record<string, unknown>;
  const messages = source[rule.list];
  if (!Array.isArray(messages)) return payload;
  const paths = rule.fields.map((field) => field.split("."));
  const codes = new Map<string, number>();
  const plainRoles = rule.plainRoles ?? [];
  for (let r = 0; r < plainRoles.length; r++) codes.set(plainRoles[r], r);
  const wholeRoles = new Set(rule.wholeRoles);
  const summary: unknown[] = new Array(messages.length);
  for (let i = 0; i < messages.length; i++) {
    const message: unknown = messages[i];
    if (typeof message !== "object" || message === null) {
      summary[i] = message;
      continue;
    }
    const whole = message as Record<string, unknown>;
    if (wholeRoles.has(whole.role as string)) {
      summary[i] = message;
      continue;
    }
    const picked: Record<string, unknown> = {};
    if (Array.isArray(whole)) {
      summary[i] = picked;
      continue;
    }
    const code = typeof whole.role === "string" ? codes.get(whole.role) : undefined;
    if (code !== undefined) {
      summary[i] = code;
      continue;
    }
    for (let p = 0; p < paths.length; p++) {
      const keys = paths[p];
      const value = pick(whole, keys);
      if (value === undefined) continue;
      let into = picked;
      for (let k = 0; k < keys.length - 1; k++) {
        const key = keys[k];
        if (typeof into[key] !== "object" || into[key] === null) into[key] = {};
        into = into[key] as Record<string, unknown>;
      }
      into[keys[keys.length - 1]] = value;
    }
    summary[i] = picked;
  }
  return { ...source, [rule.list]: summary };
}

/** The value at the dotted path `keys` of `whole`, undefined when absent. */
function pick(whole: Record<string, unknown>, keys: string[]): unknown {
  let value: unknown = whole[keys[0]];
  for (let k = 1; k < keys.length && value !== undefined; k++) {
    value =
      typeof value === "object" && value !== null && !Array.isArray(value)
        ? (value as Record<string, unknown>)[keys[k]]
        : undefined;
  }
  return value;
}

/**
 * The sidecar's `ids_hash`: 32-bit FNV-1a over each id's UTF-16 code units,
 * each id followed by a newline unit (an id that is not a string counts as
 * `""`). Indexed loops, as in `summarize`: it runs once per session start,
 * mostly before V8 optimizes it (100,000 entries of one shape in plain
 * Node: 3 ms against 5-10 ms with an iterator; over Pi's own entries,
 * whose shapes vary, 4-8 ms either way).
 */
export function idsHash(entries: ReadonlyArray<{ id?: unknown }>): number {
  let hash = 0x811c9dc5;
  const count = entries.length;
  for (let e = 0; e < count; e++) {
    const id = entries[e].id;
    if (typeof id === "string") {
      const length = id.length;
      for (let i = 0; i < length; i++) {
        hash = Math.imul(hash ^ id.charCodeAt(i), 0x01000193);
      }
    }
    hash = Math.imul(hash ^ 0x0a, 0x01000193);
  }
  return hash >>> 0;
}
