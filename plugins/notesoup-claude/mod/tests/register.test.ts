// The reset flow with Claude Code's own test kit: the engine's `$` drives the
// mod's hooks; the hooks beneath stand in for the host (no process runs in a
// test), with `notesoup mod` answered from a script of its replies.
//
// The kit's host does not fill in the conversation for a plugin's own
// `$.session.compact({ instructions })` (it hands the chain no `messages`),
// so the compaction the mod asks for is refused there; the tests drive that
// compaction the way the engine dispatches it, as `$.session.compact` with
// `trigger: 'plugin'` and the transcript.

import type { SessionCompactInput, SessionMessage } from 'claude-code'
import { describe, expect, test } from 'claude-code/testing'

const BOOT = '<context_window>\nAgent name: claude (brain: claude)\nCurrent context window id: claude:s1:2\n</context_window>'

type Reply = { ok: true; result: unknown } | { ok: false; error: string }

/** The host beneath the mod: session facts, the plugin env and the binary. */
function host(on: any, replies: Record<string, Reply>) {
  const calls: { argv: readonly string[]; request: any }[] = []
  const logs: string[] = []
  // The engine's own events end here with their own result...
  on('session.start', async ($: unknown, e: any) => ({ cwd: e.cwd }))
  on('turn.start', async ($: unknown, e: any) => ({ turnId: e.turnId }))
  on('turn.complete', async ($: unknown, e: any) => ({ text: e.answer }))
  // ...and the mod's calls on `$` with `{ value }`.
  on('session.id', async () => ({ value: 's1' }))
  on('session.cwd', async () => ({ value: '/w/proj' }))
  on('session.info', async () => ({ value: { transcriptPath: '/c/projects/-w-proj/s1.jsonl' } }))
  on('process.hookEnv', async () => ({
    value: {
      CLAUDE_PLUGIN_ROOT: '/p/notesoup-reset',
      CLAUDE_PLUGIN_DATA: '/c/plugins/data/notesoup-reset-local',
    },
  }))
  on('process.run', async ($: unknown, e: any) => {
    calls.push({ argv: e.argv, request: JSON.parse(e.init.stdin) })
    const reply = replies[e.argv[2]]
    const stdout = JSON.stringify(reply) + '\n'
    return { value: { exitCode: 0, stdout, stderr: '', isStdoutTruncated: false, isStderrTruncated: false } }
  })
  on('ui.log', async ($: unknown, e: any) => {
    logs.push(e.text)
    return { value: undefined }
  })
  return { calls, logs, ops: () => calls.map((c) => c.argv[2]) }
}

const INSTRUCTIONS = 'notesoup: reset to a fresh notes-only context window.'
const RESET = { ok: true, result: { reset: true, origin: 'normal', instructions: INSTRUCTIONS } } as const
const WAIT = { ok: true, result: { reset: false, instructions: INSTRUCTIONS } } as const
const TURN = { answer: 'done.', durationMs: 5, isAborted: false, turnId: 't1', reason: 'answer' } as const
const WINDOW: SessionMessage[] = [
  { role: 'user', text: 'a long window', toolUses: [] },
  { role: 'assistant', text: 'closed out.', toolUses: [] },
]
const OWN: SessionCompactInput = { trigger: 'plugin', instructions: INSTRUCTIONS, messages: WINDOW }
const BOOTED = { ok: true, result: { text: BOOT, window: 'claude:s1:2' } } as const
const FAILED = { ok: true, result: { window: 'claude:s1:1', message: 'notesoup: reset failed; keeping the current window: x' } } as const

describe('notesoup-reset', () => {
  test('after a main-loop turn the binary decides, and a reset asks for the compaction', async ($, on) => {
    const h = host(on, { decide: RESET, failed: FAILED })
    await $.session.start({ cwd: '/w/proj', surface: 'terminal', isInteractive: true })
    await $.turn.start({ text: 'go on', turnId: 't1' })
    expect(h.ops()).toEqual([])
    await $.turn.complete(TURN)
    expect(h.calls[0]?.argv).toEqual(['/p/notesoup-reset/bin/notesoup', 'mod', 'decide'])
    expect(h.calls[0]?.request).toEqual({
      sessionId: 's1',
      cwd: '/w/proj',
      transcriptPath: '/c/projects/-w-proj/s1.jsonl',
      pluginData: '/c/plugins/data/notesoup-reset-local',
    })
    // The kit refuses the compaction itself (see the top): the mod reports
    // the failure through the binary, which gives the window back.
    expect(h.ops()).toEqual(['decide', 'failed'])
    expect(h.calls[1]?.request.reason).toContain('messages that are not a list')
    expect(h.logs).toEqual(['notesoup: reset failed; keeping the current window: x'])
  })

  test("the mod's compaction keeps exactly one message, the boot of the next window", async ($, on) => {
    const h = host(on, { decide: RESET, boot: BOOTED, failed: FAILED })
    await $.session.start({ cwd: '/w/proj', surface: 'terminal', isInteractive: true })
    await $.turn.complete(TURN)
    const compacted = await $.session.compact(OWN)
    expect(compacted).toEqual({ messages: [{ role: 'user', text: BOOT, toolUses: [] }] })
    expect(h.ops()).toEqual(['decide', 'failed', 'boot'])
  })

  test('a boot that cannot be built vetoes the compaction', async ($, on) => {
    const h = host(on, {
      decide: RESET,
      boot: { ok: false, error: 'the notes root is unknown: set PI_NOTES_HOME or HOME' },
      failed: FAILED,
    })
    await $.session.start({ cwd: '/w/proj', surface: 'terminal', isInteractive: true })
    await $.turn.complete(TURN)
    const vetoed = await $.session.compact(OWN)
    expect(vetoed).toEqual({ skip: 'notesoup: Notes boot failed: the notes root is unknown: set PI_NOTES_HOME or HOME' })
  })

  test("other compactions pass through: the person's, another plugin's, a subagent's", async ($, on) => {
    const h = host(on, { decide: RESET, failed: FAILED })
    const summaries: string[] = []
    on('session.compact', async ($: unknown, e: any) => {
      // The mod's own request arrives without the transcript (see the top).
      if (e.messages === undefined) return { skip: 'no transcript in the kit' }
      summaries.push(e.trigger)
      return { messages: [{ role: 'assistant', text: 'summary', toolUses: [] }] }
    })
    await $.session.start({ cwd: '/w/proj', surface: 'terminal', isInteractive: true })
    await $.turn.complete(TURN)
    await $.session.compact({ trigger: 'manual', instructions: INSTRUCTIONS, messages: WINDOW })
    await $.session.compact({ trigger: 'plugin', instructions: 'keep the plan', messages: WINDOW })
    await $.session.compact({ ...OWN, agentId: 'a1' })
    expect(summaries).toEqual(['manual', 'plugin', 'plugin'])
    expect(h.ops()).toEqual(['decide', 'failed'])
  })

  test('nothing happens until the binary says so', async ($, on) => {
    const h = host(on, { decide: WAIT })
    await $.session.start({ cwd: '/w/proj', surface: 'terminal', isInteractive: true })
    await $.turn.complete(TURN)
    expect(h.ops()).toEqual(['decide'])
    expect(h.logs).toEqual([])
  })

  test('headless sessions and subagent turns never reset', async ($, on) => {
    const h = host(on, { decide: RESET })
    await $.session.start({ cwd: '/w/proj', surface: null, isInteractive: false })
    await $.turn.complete(TURN)
    await $.session.start({ cwd: '/w/proj', surface: 'terminal', isInteractive: true })
    await $.turn.complete({ ...TURN, agentId: 'a1' })
    expect(h.ops()).toEqual([])
  })
})
