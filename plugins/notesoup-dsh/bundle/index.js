// @ts-check
// Cordis row `notesoup/dsh`: notesoup's boot, budget, tools, /fresh-window and
// resets on dsh. No decisions live here: each dsh event is forwarded to the
// `notesoup-dsh serve` sidecar with the session events it has not seen yet,
// and the writes it plans are performed with dsh's public services. When the
// sidecar is unavailable the window is kept and dsh runs without notesoup.
import { readFileSync, realpathSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { Sidecar, PROTOCOL_VERSION, servedTool } from './sidecar.js'

export const name = 'notesoup/dsh'
export const inject = ['tools', 'systemPrompt', 'tokenMeter', 'sessions']

// Written next to this file by `notesoup-dsh bundle`, from the same binary.
const manifest = JSON.parse(readFileSync(new URL('./manifest.json', import.meta.url), 'utf8'))
const SYSTEM_PROMPT_PLUGIN = '@deepseek-ai/dsh-system-prompt'

// The dreamer `notesoup-dsh dream` starts is a dsh of the user's profile,
// which may mount this row: it must not boot, budget or reset the dreamer.
export const DREAMER_VAR = 'NOTESOUP_DSH_DREAMER'

// The version of the dsh running this process, from the package.json above
// its entry script; null when it cannot be read (an embedding host).
function runningDsh() {
  try {
    let dir = dirname(realpathSync(process.argv[1]))
    for (;;) {
      try {
        const found = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'))
        if (found.name === '@deepseek-ai/dsh') return typeof found.version === 'string' ? found.version : null
      } catch {
        // No package.json here: look further up.
      }
      const up = dirname(dir)
      if (up === dir) return null
      dir = up
    }
  } catch {
    return null
  }
}

export function apply(ctx, config = {}) {
  if (process.env[DREAMER_VAR] === '1') {
    // The engine row waits for this service, and dsh refuses to boot with a
    // row that never activates: serve nobody instead of nothing.
    ctx.provide('notesoup', {
      reset: async () => {
        throw new Error('notesoup stands aside in the dreamer')
      },
      served: () => false,
    })
    return
  }
  const binary = config.binary ?? process.env.NOTESOUP_DSH_BIN ?? 'notesoup-dsh'
  const sidecar = new Sidecar(binary, { ...process.env, ...(config.env ?? {}) }, ctx.logger)
  const hello = sidecar.request('hello', {
    protocol: PROTOCOL_VERSION,
    bundle: manifest.version,
    dsh: manifest.dsh,
    settings: config.settings ?? {},
    running_dsh: runningDsh(),
  })
  // Settings problems and a dsh other than the pinned one: each said once.
  hello.then(
    (answer) => {
      for (const warning of answer.warnings ?? []) ctx.logger.warn(warning)
    },
    (error) => sidecar.fail(`handshake refused: ${error.message}`),
  )

  const agents = new Map() // agent id -> { ready, boot, pending, sent, resetting }

  const state = (agent) => {
    let entry = agents.get(agent.id)
    if (!entry) {
      entry = { ready: undefined, boot: '', pending: undefined, sent: 0, resetting: false }
      agents.set(agent.id, entry)
    }
    return entry
  }

  // Top-level sessions only: a subagent's context belongs to its parent.
  const served = (agent) => (agent?.session?.header?.delegationDepth ?? 0) === 0

  // The sidecar caps a request line; a long log (a resumed session, a re-send
  // from 0) goes ahead in `session.sync` batches of about this many bytes.
  const batchBytes = config.syncBatchBytes ?? manifest.syncBatchBytes

  // A batch of events starting at seq `from`, plus the identity the sidecar
  // needs.
  const session = (agent, from, events) => ({
    id: agent.session.id,
    cwd: agent.session.header.cwd ?? process.cwd(),
    model: agent.options.model ?? null,
    from,
    events,
  })

  // An event larger than a batch (a pasted file, a huge tool output) would
  // fail every request of its session at the line cap; its long strings are
  // cut, keeping its kind, seq, surface op and tool pairing.
  const MAX_STRING = 64 * 1024
  const cut = (value) => {
    if (typeof value === 'string') {
      return value.length > MAX_STRING
        ? `${value.slice(0, MAX_STRING)}… [notesoup: ${value.length - MAX_STRING} characters omitted]`
        : value
    }
    if (Array.isArray(value)) return value.map(cut)
    if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, cut(v)]))
    return value
  }
  const fitted = (event) => {
    const bytes = Buffer.byteLength(JSON.stringify(event))
    if (bytes <= batchBytes) return { event, bytes }
    const small = { ...event, data: cut(event.data) }
    return { event: small, bytes: Buffer.byteLength(JSON.stringify(small)) }
  }

  // Sends the events from `from` on in batches of at most `batchBytes` but
  // the last, which is returned for the request itself to carry.
  const catchUp = async (agent, entry, from) => {
    const all = agent.session.events
    let start = from
    let batch = []
    let size = 0
    for (let seq = from; seq < all.length; seq++) {
      const { event, bytes } = fitted(all[seq])
      if (batch.length > 0 && size + bytes > batchBytes) {
        await sidecar.request('session.sync', { session: session(agent, start, batch) })
        entry.sent = seq
        start = seq
        batch = []
        size = 0
      }
      batch.push(event)
      size += bytes + 1
    }
    return { start, batch }
  }

  // One session-scoped request; a sidecar that lost track gets the whole log.
  /**
   * @template {Exclude<import('./sidecar.js').Op, 'hello'>} O
   * @param {any} agent
   * @param {O} op
   * @param {Omit<import('./sidecar.js').Params<O>, 'session'>} params
   * @returns {Promise<import('./sidecar.js').Results[O]>}
   */
  const ask = async (agent, op, params) => {
    await hello
    const entry = state(agent)
    for (const from of [entry.sent, 0]) {
      try {
        const { start, batch } = await catchUp(agent, entry, from)
        const full = /** @type {import('./sidecar.js').Params<O>} */ ({ ...params, session: session(agent, start, batch) })
        const result = await sidecar.request(op, full)
        entry.sent = start + batch.length
        return result
      } catch (error) {
        if (error.code !== 'resync' || from === 0) throw error
      }
    }
  }

  // Each distinct warning is logged once: a sidecar that is down fails every
  // step the same way, and one line says it.
  const warned = new Set()
  const warn = (what, error) => {
    const text = `notesoup: ${what}: ${error.message}`
    if (warned.has(text)) return
    warned.add(text)
    ctx.logger.warn(text)
  }

  // Window recovery, once per agent: the boot it keeps and a pending reset.
  const open = (agent) => {
    const entry = state(agent)
    entry.ready ??= ask(agent, 'window.open', {}).then(
      (window) => {
        entry.boot = window.context_text
        entry.pending = window.pending_reset ?? undefined
      },
      (error) => warn('boot unavailable', error),
    )
    return entry.ready
  }

  // The boot, frozen per window. Prompt callbacks are synchronous, so the
  // assemble waterfall waits for recovery and fills in the frozen text.
  ctx.systemPrompt.variable(manifest.templateOpen, () => '{{')
  ctx.systemPrompt.context({
    name: manifest.bootSection,
    order: 50,
    text: (assembly) => (assembly.agent ? (agents.get(assembly.agent.id)?.boot ?? '') : ''),
  })
  ctx.on('system-prompt/assemble', async (assembly, context, next) => {
    const agent = context.agent
    if (!served(agent)) return next()
    await open(agent)
    const boot = state(agent).boot
    const result = await next()
    return {
      ...result,
      contexts: result.contexts.map((c) => (c.name === manifest.bootSection ? { ...c, text: boot } : c)),
    }
  })

  ctx.on('agent/created', ({ agent }) => {
    if (served(agent)) open(agent)
  })
  ctx.on('agent/disposed', ({ agent }) => agents.delete(agent.id))

  // The reset transaction: one replace append, the boot swap, the durability
  // barrier, then the continuation. Nothing is written if planning fails.
  /**
   * @param {any} agent
   * @param {import('./sidecar.js').PendingReset} request
   * @param {boolean} midTurn
   */
  const reset = async (agent, request, midTurn) => {
    const entry = state(agent)
    const plan = await ask(agent, 'reset.plan', {
      surface: [...agent.session.surface.nodes],
      origin: request.origin,
      trigger: request.trigger,
      prompt: request.prompt ?? null,
    })
    let marker
    if (plan.replace) {
      marker = agent.session.append('user/message', plan.message, {
        surfaceOp: { op: 'replace', start: plan.replace.start, end: plan.replace.end },
        sourceEventSeqs: plan.source_event_seqs,
      })
    } else {
      agent.inject(plan.message)
    }
    entry.boot = plan.context_text
    entry.pending = undefined
    await ctx.sessions.flush(agent.session)
    // Mid-turn, the caller puts the continuation into the step it proposes.
    if (plan.followup && !midTurn) agent.followup(plan.followup)
    ctx.logger.info(`notesoup: memory cleared · ${plan.window_id}`)
    return { plan, marker }
  }

  // A reset requested for the end of the turn runs once the agent is idle.
  const resetWhenIdle = (agent) => {
    const entry = state(agent)
    if (!entry.pending || entry.resetting) return
    let run
    try {
      run = agent.runMaintenance(() => reset(agent, entry.pending, false))
    } catch {
      return // someone else holds the idle phase; the next idle retries
    }
    entry.resetting = true
    run
      .catch((error) => {
        entry.pending = undefined
        warn('reset failed; keeping the current window', error)
      })
      .finally(() => {
        entry.resetting = false
      })
  }
  ctx.on('agent/status', ({ agent, status }) => {
    if (status === 'idle' && served(agent)) resetWhenIdle(agent)
  })

  // The budget, before every step: dsh's meter against the context window.
  ctx.on('agent/pre-step', async (payload, next) => {
    const { agent } = payload
    if (!served(agent) || state(agent).resetting) return next()
    let decision
    try {
      await open(agent)
      const measurement = ctx.tokenMeter.measure(agent.session)
      decision = await ask(agent, 'budget.decide', {
        total_tokens: measurement.totalTokens,
        context_window: agent.session.requestContext()?.contextWindow ?? null,
      })
    } catch (error) {
      warn('budget unavailable', error)
      return next()
    }
    if (decision.action === 'reset') {
      const entry = state(agent)
      entry.resetting = true
      let done
      try {
        done = await reset(agent, { origin: 'forced', trigger: 'budget' }, true)
      } catch (error) {
        warn('hard-reserve reset failed; keeping the current window', error)
        return next()
      } finally {
        entry.resetting = false
      }
      const stepped = await next()
      if (stepped.kind !== 'enter') return stepped
      // The runtime-context snapshot was assembled before the reset; dsh
      // re-logs it at the next step.
      const kept = stepped.messages.filter((m) => m.source?.plugin !== SYSTEM_PROMPT_PLUGIN)
      if (done.plan.followup) kept.push(done.plan.followup)
      return { kind: 'enter', messages: kept }
    }
    const stepped = await next()
    if (stepped.kind !== 'enter' || !decision.message) return stepped
    return { kind: 'enter', messages: [...stepped.messages, decision.message] }
  })

  // The tools, registered under their plain names from the manifest.
  for (const tool of manifest.tools) {
    ctx.tools.register(
      servedTool(tool, async (args, exec) => {
        const agent = exec.agent
        if (!agent || !served(agent)) throw new Error('notesoup tools serve top-level agents only')
        /** @type {Omit<import('./sidecar.js').ToolParams, 'session'>} */
        const params = { name: tool.name, arguments: args ?? {}, call_id: exec.callId }
        // The countdown is measured at the call: before the first request
        // the pre-step budget could not know the context window yet.
        if (tool.name === manifest.budgetTool) {
          params.total_tokens = ctx.tokenMeter.measure(agent.session).totalTokens
          params.context_window = agent.session.requestContext()?.contextWindow ?? null
        }
        const answer = await ask(agent, 'tool', params)
        if (answer.reset) state(agent).pending = answer.reset
        if (answer.conclude_turn) exec.concludeTurn()
        if (answer.is_error) throw new Error(answer.text)
        return { text: answer.text, result: answer.result }
      }),
    )
  }

  // /fresh-window [prompt]: close out, reset, then stop or continue. Profiles
  // without a command registry simply have no command.
  ctx.inject(['commands'], (ctx) => {
    ctx.effect(() =>
      ctx.commands.register({
        name: 'fresh-window',
        description: 'Close out notes, then start a fresh context window (with text: continue with it)',
        async handler(invocation) {
          const agent = invocation.agent
          const answer = await ask(agent, 'command.fresh_window', { prompt: invocation.rawInput.trim() || null })
          if (answer.reset) state(agent).pending = answer.reset
          if (answer.steer) agent.steer(answer.steer)
          else if (agent.status === 'idle') resetWhenIdle(agent)
          return { kind: 'success', text: answer.text }
        },
      }),
    )
  })

  // The engine row reaches the transaction through this service.
  ctx.provide('notesoup', {
    reset: (agent, request, midTurn) => reset(agent, request, midTurn),
    served,
  })

  ctx.effect(() => () => sidecar.close(), 'notesoup sidecar')
}
