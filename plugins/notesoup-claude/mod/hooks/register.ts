// notesoup-reset: the automatic reset for notesoup, as a Claude Code mod.
//
// It holds no logic of its own: every decision and every text comes from the
// `notesoup` binary (`notesoup mod <op>`, one JSON request on stdin, one JSON
// line out), which shares its session records with the notesoup plugin's hooks.
// The mod only tracks what the engine tells it: whether a person is at the
// prompt, whether a turn runs, and whether its own compaction is under way.

import type { EngineInterface, Register } from 'claude-code'

type Engine = EngineInterface

/** Asks the binary; rejects with its refusal. */
async function ask($: Engine, op: string, extra: Record<string, string> = {}): Promise<any> {
  const env = await $.process.hookEnv()
  const request = {
    sessionId: await $.session.id(),
    cwd: await $.session.cwd(),
    transcriptPath: (await $.session.info()).transcriptPath,
    pluginData: env.CLAUDE_PLUGIN_DATA,
    ...extra,
  }
  const run = await $.process.run([`${env.CLAUDE_PLUGIN_ROOT}/bin/notesoup`, 'mod', op], {
    stdin: JSON.stringify(request),
    timeoutMs: 10000,
  })
  if (run.exitCode !== 0) throw new Error(`notesoup mod ${op} exited ${run.exitCode}: ${run.stderr.trim()}`)
  const answer = JSON.parse(run.stdout)
  if (!answer.ok) throw new Error(answer.error)
  return answer.result
}

function reason(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

/** What the engine has told the mod so far. */
type Seen = {
  isHeadless: boolean
  isTurnRunning: boolean
  isResetting: boolean
  /** The binary's compaction instructions: they mark the mod's own compaction. */
  instructions?: string
}

/** Resets when the binary says so: compacts, then reports how it ended. */
async function maybeReset($: Engine, seen: Seen) {
  if (seen.isHeadless || seen.isTurnRunning || seen.isResetting) return
  const decision = await ask($, 'decide')
  seen.instructions = decision.instructions
  if (!decision.reset) return
  seen.isResetting = true
  try {
    const outcome = await $.session.compact({ instructions: decision.instructions })
    const done =
      outcome.skip === undefined ? await ask($, 'committed') : await ask($, 'failed', { reason: outcome.skip })
    $.ui.log(done.message)
  } catch (error) {
    $.ui.log((await ask($, 'failed', { reason: reason(error) })).message)
  } finally {
    seen.isResetting = false
  }
}

/** A reset attempt whose own failure goes to the debug log only. */
async function tryReset($: Engine, seen: Seen) {
  try {
    await maybeReset($, seen)
  } catch (error) {
    $.ui.log(`notesoup: ${reason(error)}`, { to: 'debug' })
  }
}

/** The boot of the next window as the one message the conversation keeps. */
async function compactToBoot($: Engine) {
  try {
    const boot = await ask($, 'boot')
    return { messages: [{ role: 'user' as const, text: boot.text, toolUses: [] }] }
  } catch (error) {
    return { skip: `notesoup: Notes boot failed: ${reason(error)}` }
  }
}

export const register: Register = (on) => {
  const seen: Seen = { isHeadless: false, isTurnRunning: false, isResetting: false }

  on('session.start', async ($, e, next) => {
    // Headless (-p / SDK) sessions are left alone, as in the original.
    seen.isHeadless = !e.isInteractive
    return next(e)
  })

  on('turn.start', async ($, e, next) => {
    if (e.agentId === undefined) seen.isTurnRunning = true
    return next(e)
  })

  on('turn.complete', async ($, e, next) => {
    const result = await next(e)
    if (e.agentId === undefined) {
      seen.isTurnRunning = false
      await tryReset($, seen)
    }
    return result
  })

  on('session.measure', async ($, e, next) => {
    const result = await next(e)
    await tryReset($, seen)
    return result
  })

  // The mod's own compaction: the whole conversation becomes one user
  // message, the boot of the next window. A boot that cannot be built vetoes
  // the reset and keeps the window.
  on('session.compact', async ($, e, next) => {
    const isOwn = e.trigger === 'plugin' && e.agentId === undefined && e.instructions === seen.instructions
    if (!isOwn || seen.instructions === undefined) return next(e)
    return compactToBoot($)
  })
}
