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
 * message of one of `rule.wholeRoles`, which is kept whole.
 */
export function summarize(payload: unknown, rule: MessageSummaryRule): unknown {
  if (typeof payload !== "object" || payload === null) return payload;
  const source = payload as Record<string, unknown>;
  const messages = source[rule.list];
  if (!Array.isArray(messages)) return payload;
  const paths = rule.fields.map((field) => field.split("."));
  const summary = messages.map((message: unknown) => {
    if (typeof message !== "object" || message === null) return message;
    const whole = message as Record<string, unknown>;
    if (rule.wholeRoles.includes(whole.role as string)) return message;
    const picked: Record<string, unknown> = {};
    for (const keys of paths) {
      let value: unknown = whole;
      for (const key of keys) {
        value =
          typeof value === "object" && value !== null && !Array.isArray(value)
            ? (value as Record<string, unknown>)[key]
            : undefined;
      }
      if (value === undefined) continue;
      let into = picked;
      for (const key of keys.slice(0, -1)) {
        if (typeof into[key] !== "object" || into[key] === null) into[key] = {};
        into = into[key] as Record<string, unknown>;
      }
      into[keys[keys.length - 1]] = value;
    }
    return picked;
  });
  return { ...source, [rule.list]: summary };
}

/**
 * The sidecar's `ids_hash`: 32-bit FNV-1a over each id's UTF-16 code units,
 * each id followed by a newline unit (an id that is not a string counts as
 * `""`).
 */
export function idsHash(entries: ReadonlyArray<{ id?: unknown }>): number {
  let hash = 0x811c9dc5;
  for (const entry of entries) {
    const id = typeof entry.id === "string" ? entry.id : "";
    for (let i = 0; i < id.length; i++) {
      hash = Math.imul(hash ^ id.charCodeAt(i), 0x01000193);
    }
    hash = Math.imul(hash ^ 0x0a, 0x01000193);
  }
  return hash >>> 0;
}
