// In-process Cordis harness (node:test): a bare `new Context()` with the real
// pinned dsh packages (Cordis, llm, session, agent, agent loop, system prompt,
// tools, token meter, commands), the scripted model, and notesoup's bundle
// with the sidecar this build made. Run by the cargo test `harness` with
// NOTESOUP_DSH_ROOT (the pinned install), NOTESOUP_DSH_BIN (the sidecar),
// NOTESOUP_DSH_BUNDLE (the written bundle) and NOTESOUP_DSH_FIXTURES.
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { pathToFileURL } from 'node:url'

const env = (name) => {
  const value = process.env[name]
  assert.ok(value, `${name} is set`)
  return value
}
const hoisted = join(env('NOTESOUP_DSH_ROOT'), 'dsh/node_modules/.pnpm/node_modules')
const bundle = env('NOTESOUP_DSH_BUNDLE')
const manifest = JSON.parse(readFileSync(join(bundle, 'manifest.json'), 'utf8'))

/** Imports an installed package's ESM entry by its real path (pnpm layout). */
async function load(name) {
  const dir = join(hoisted, name)
  const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'))
  const entry = pkg.exports?.['.']
  const file = typeof entry === 'string' ? entry : (entry?.import ?? entry?.default ?? pkg.main)
  return import(pathToFileURL(realpathSync(join(dir, file))).href)
}

const { Context } = await load('@deepseek-ai/cordis')
const spine = [
  ['@deepseek-ai/cordis-plugin-timer'],
  ['@deepseek-ai/dsh-llm'],
  ['@deepseek-ai/dsh-session'],
  ['@deepseek-ai/dsh-agent'],
  ['@deepseek-ai/dsh-system-prompt', { persona: '' }],
  ['@deepseek-ai/dsh-tools'],
  ['@deepseek-ai/dsh-token-meter'],
  ['@deepseek-ai/dsh-agent-loop', { agents: [] }],
  ['@deepseek-ai/dsh-commands'],
]
const modules = await Promise.all(spine.map(([name]) => load(name)))
const scriptedLlm = await import(pathToFileURL(join(env('NOTESOUP_DSH_FIXTURES'), 'scripted-llm.mjs')).href)
const notesoup = await import(pathToFileURL(join(bundle, 'index.js')).href)

/**
 * One dsh app: the spine, the scripted model replaying `script`, and the
 * bundle spawning `binary`. Notes live under a fresh PI_NOTES_HOME.
 */
async function app(script, { binary = env('NOTESOUP_DSH_BIN'), notes, config = {} } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'notesoup-harness-'))
  const notesHome = notes ?? join(dir, 'notes')
  mkdirSync(notesHome, { recursive: true })
  writeFileSync(join(dir, 'script.json'), JSON.stringify(script))
  const ctx = new Context()
  const logged = []
  ctx.logger.exporter({ colors: 0, levels: { default: 3 }, export: (message) => logged.push(JSON.stringify(message)) })
  const fibers = spine.map(([, config], index) => ctx.plugin(modules[index].default ?? modules[index], config))
  fibers.push(ctx.plugin(scriptedLlm, { script: join(dir, 'script.json'), requests: join(dir, 'requests.jsonl') }))
  const fiber = ctx.plugin(notesoup, { binary, env: { PI_NOTES_HOME: notesHome }, ...config })
  await Promise.all([...fibers, fiber])
  const requests = () =>
    readFileSync(join(dir, 'requests.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line))
  return { ctx, dir, notesHome, requests, logged, close: () => fiber.dispose() }
}

const userMessage = (text) => ({ role: 'user', id: randomUUID(), content: [{ type: 'text', text }], source: { kind: 'user' } })

/** Creates an agent (optionally on a seed) and runs one user turn per text. */
async function drive(ctx, texts, options = {}) {
  const { agent } = await ctx.agents.create({
    sessionId: `session-${randomUUID()}`,
    meta: { cwd: options.cwd ?? tmpdir(), ...(options.meta ?? {}) },
    agentOptions: { provider: 'scripted', model: 'scripted-model' },
    ...(options.seed ? { seed: options.seed } : {}),
  })
  await agent.whenIdle()
  for (const text of texts) {
    agent.followup(userMessage(text))
    await agent.whenIdle()
  }
  return agent
}

const sourceOf = (event) => (event.type === 'user/message' ? event.data.source : event.data.message?.source)
// The boot as dsh logged the prompt context (not notesoup's reset markers).
const bootSections = (events) =>
  events
    .filter((e) => e.type === 'user/message' && e.data.source?.plugin !== 'notesoup')
    .flatMap((e) => (e.data.source?.sections ?? []).filter((s) => s.name === manifest.bootSection))
const notices = (events, kind) =>
  events.filter((e) => e.type === 'user/message' && e.data.source?.plugin === 'notesoup' && e.data.source.notice === kind)
const markers = (events) =>
  events.filter((e) => e.type === 'user/message' && e.data.source?.plugin === 'notesoup' && e.data.source.form === 'snapshot')
const toolTexts = (events, name) => {
  const calls = new Set(events.filter((e) => e.type === 'tool/call' && e.data.name === name).map((e) => e.data.callId))
  return events
    .filter((e) => e.type === 'tool/result' && calls.has(e.data.message.content[0].toolCallId))
    .map((e) => ({
      text: e.data.message.content[0].content.map((b) => b.text).join(''),
      isError: e.data.message.content[0].isError === true,
    }))
}
const boots = (request) => request.messages.filter((m) => m.text.includes('<context_window>\n')).length

test('the boot is one frozen prompt context, escaped for dsh templates', async () => {
  const notes = mkdtempSync(join(tmpdir(), 'notesoup-harness-notes-'))
  mkdirSync(join(notes, 'human'), { recursive: true })
  writeFileSync(join(notes, 'human', 'MAP.md'), '# Human MAP\n\nTemplates look like {{model}} and {{cwd}}.\n')
  const { ctx, requests, close } = await app([{ text: 'ONE' }, { text: 'TWO' }], { notes })
  try {
    const agent = await drive(ctx, ['first', 'second'])
    const events = agent.session.events
    const logged = bootSections(events)
    assert.equal(logged.length, 1, 'logged once: the second turn re-used the frozen text')
    const boot = logged[0].text
    assert.ok(boot.startsWith('<context_window>\n'), boot)
    assert.ok(boot.includes(`Current context window id: dsh:${agent.session.id}:1\n`), boot)
    assert.ok(boot.includes('Templates look like {{model}} and {{cwd}}.'), boot)
    const seen = requests()
    assert.equal(seen.length, 2)
    for (const request of seen) assert.equal(boots(request), 1)
  } finally {
    await close()
  }
})

test('the tools are registered from the manifest and answer through the sidecar', async () => {
  const { ctx, close } = await app([{ tool: 'history_list', args: { roles: ['user'] } }, { tool: 'history_read', args: { seq: 0 } }, { text: 'DONE' }])
  try {
    const agent = await drive(ctx, ['list my messages'])
    const header = agent.session.events.find((e) => e.type === 'request/header').data.header
    for (const tool of manifest.tools) {
      const offered = header.tools.find((t) => t.name === tool.name)
      assert.ok(offered, `${tool.name} offered`)
      assert.equal(offered.description, tool.description)
      assert.deepEqual(offered.parameters ?? offered.inputSchema, tool.parameters)
    }
    const [list] = toolTexts(agent.session.events, 'history_list')
    assert.equal(list.isError, false)
    assert.match(list.text, /^seq \d+ \| window dsh:session-[^|]+:1 \| user\nlist my messages$/)
    const [read] = toolTexts(agent.session.events, 'history_read')
    assert.equal(read.isError, true, 'a refusal is a tool error')
    assert.match(read.text, /^error: unknown_seq: unknown seq 0: this session's items run 1\.\.\d+/)
  } finally {
    await close()
  }
})

test('the budget: reminder, warning and the countdown from the meter', async () => {
  // 131,072-token window: 95,000 reported leaves about 36,000 (reminder
  // line 40,960), 100,000 about 31,000 (warning line 32,768).
  const { ctx, close } = await app([
    { tool: 'get_context_remaining', inputTokens: 95000 },
    { tool: 'get_context_remaining', inputTokens: 100000 },
    { text: 'CLOSING OUT' },
  ])
  try {
    const agent = await drive(ctx, ['work'])
    const events = agent.session.events
    const reminder = notices(events, 'reminder')
    const warning = notices(events, 'warning')
    assert.equal(reminder.length, 1)
    assert.equal(warning.length, 1)
    assert.ok(reminder[0].seq < warning[0].seq)
    assert.match(reminder[0].data.content[0].text, /^<context_window_guidance>\nOnly \d+ tokens left/)
    const countdowns = toolTexts(events, 'get_context_remaining').map((r) => JSON.parse(r.text).remaining_tokens)
    assert.equal(countdowns.length, 2)
    assert.ok(countdowns[0] > 0 && countdowns[0] < 40960 - 32768, `${countdowns}`)
    assert.equal(countdowns[1], 0)
    assert.equal(markers(events).length, 0, 'no reset before the hard reserve')
  } finally {
    await close()
  }
})

test('a session seeded from the log keeps its window', async () => {
  const { ctx, close } = await app([{ tool: 'wipe_memory' }, { text: 'IN WINDOW 2' }, { tool: 'wipe_memory' }, { text: 'NEXT' }])
  try {
    const parent = await drive(ctx, ['wipe please'])
    const seed = parent.session.events.map((e) => structuredClone(e))
    assert.equal(markers(seed).length, 1)
    const child = await drive(ctx, ['and again'], { seed, meta: { parentSession: parent.session.id, seedLength: seed.length } })
    const events = child.session.events
    const fresh = events.slice(seed.length)
    assert.deepEqual(bootSections(fresh).filter((s) => s.text !== ''), [], 'window 2 is recovered: no boot context')
    const [, next] = markers(events)
    assert.equal(next.data.source.windowId, `dsh:${child.session.id}:3`)
  } finally {
    await close()
  }
})

test('a log larger than a batch goes ahead in session.sync batches, a huge event cut', async () => {
  // Tiny batches: every request needs several session.sync batches first,
  // and the 100,000-character message is larger than a batch.
  const script = [{ tool: 'history_search', args: { query: 'characters omitted' } }, { tool: 'wipe_memory' }, { text: 'IN WINDOW 2' }]
  const { ctx, close } = await app(script, { config: { syncBatchBytes: 2048 } })
  try {
    const agent = await drive(ctx, [`remember this: ${'x'.repeat(100_000)}`])
    const events = agent.session.events
    const [search] = toolTexts(events, 'history_search')
    assert.equal(search.isError, false, search.text)
    assert.match(search.text, /characters omitted\]/)
    const [marker] = markers(events)
    assert.equal(marker.data.source.windowId, `dsh:${agent.session.id}:2`)
  } finally {
    await close()
  }
})

for (const [what, binary] of [
  ['a missing sidecar', '/nonexistent/notesoup-dsh'],
  ['a sidecar that exits at once', '/bin/false'],
]) {
  test(`${what} leaves dsh running without notesoup`, async () => {
    const { ctx, close, logged } = await app([{ tool: 'wipe_memory' }, { text: 'STILL HERE' }], { binary })
    try {
      const agent = await drive(ctx, ['hello', 'again'])
      const events = agent.session.events
      // Every step failed the same way; each warning was logged once.
      for (const what of ['notesoup: budget unavailable', 'notesoup: boot unavailable', 'dsh continues without notesoup']) {
        assert.equal(logged.filter((line) => line.includes(what)).length, 1, `${what} once in ${logged.join('\n')}`)
      }
      const [wipe] = toolTexts(events, 'wipe_memory')
      assert.equal(wipe.isError, true)
      assert.match(wipe.text, /notesoup unavailable/)
      assert.deepEqual(bootSections(events).filter((s) => s.text !== ''), [])
      assert.equal(markers(events).length, 0)
      const last = events.findLast((e) => e.type === 'turn/end')
      assert.equal(last.data.reason.kind, 'completed')
      assert.equal(sourceOf(events.findLast((e) => e.type === 'assistant/message')).kind, 'model')
    } finally {
      await close()
    }
  })
}

test('settings problems and another dsh are each logged once at the handshake', async () => {
  // The bundle reads the running dsh's version from the package.json above
  // the entry script; pretend that script belongs to another dsh release.
  const fake = mkdtempSync(join(tmpdir(), 'notesoup-harness-dsh-'))
  mkdirSync(join(fake, 'lib'), { recursive: true })
  writeFileSync(join(fake, 'package.json'), JSON.stringify({ name: '@deepseek-ai/dsh', version: '0.1.5-rc.2' }))
  writeFileSync(join(fake, 'lib', 'bin.js'), '')
  const entry = process.argv[1]
  process.argv[1] = join(fake, 'lib', 'bin.js')
  let opened
  try {
    opened = await app([{ text: 'ONE' }, { text: 'TWO' }], { config: { settings: { automaticResets: 'yes' } } })
  } finally {
    process.argv[1] = entry
  }
  const { ctx, logged, close } = opened
  try {
    await drive(ctx, ['first', 'second'])
    const warnings = logged.filter((line) => line.includes('"type":"warn"'))
    const count = (text) => warnings.filter((line) => line.includes(text)).length
    assert.equal(count('notesoup: automaticResets must be true or false (got \\"yes\\"); keeping automatic resets on.'), 1, warnings.join('\n'))
    assert.equal(count('notesoup: this is dsh 0.1.5-rc.2, but notesoup-dsh'), 1, warnings.join('\n'))
    assert.equal(warnings.length, 2, warnings.join('\n'))
  } finally {
    await close()
  }
})
