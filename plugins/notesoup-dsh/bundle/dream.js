// Cordis row `notesoup/dsh/dream`: the dreamer's tool set, for the headless
// dsh that `notesoup-dsh dream` starts. It registers the jailed dream tools
// (read, grep, find, ls, write, edit, delete), each answered by a
// `notesoup-dsh dream-tools --notes-home HOME` child, and makes them the only
// tools: every other tool (and its prompt guidance) is hidden from the model
// and denied by a guard, so a profile that mounts more tools still gives the
// dreamer nothing else. Thinking is off where the route allows it.
import { readFileSync } from 'node:fs'
import { Sidecar } from './sidecar.js'

export const name = 'notesoup/dsh/dream'
export const inject = ['tools']

const manifest = JSON.parse(readFileSync(new URL('./manifest.json', import.meta.url), 'utf8'))

export function apply(ctx, config = {}) {
  const binary = config.binary ?? process.env.NOTESOUP_DSH_BIN ?? 'notesoup-dsh'
  if (!config.home) throw new Error('notesoup/dsh/dream needs config.home, the notes home')
  const sidecar = new Sidecar(binary, process.env, ctx.logger, ['dream-tools', '--notes-home', config.home])
  const allowed = new Set(manifest.dreamTools.map((tool) => tool.name))

  // dsh's own file tools hold some of these names globally, so the dream
  // tools are registered on each agent's own context, where they shadow
  // same-named globals for that agent alone.
  const register = (target) => {
    for (const tool of manifest.dreamTools) {
      target.tools.register({
        name: tool.name,
        description: tool.description,
        parameters: tool.parameters,
        // Writes go one at a time, in the model's order.
        isConcurrencySafe: () => !tool.sequential,
        output: {
          schema: { type: 'object' },
          render: (_args, value) => [{ type: 'text', text: value.text }],
        },
        finalizeContent: (_exec, result) =>
          result.isError ? [{ type: 'text', text: result.error.message }] : undefined,
        async execute(args) {
          const answer = await sidecar.request('dream.tool', { name: tool.name, arguments: args ?? {} })
          if (answer.is_error) throw new Error(answer.text)
          return { text: answer.text }
        },
      })
    }
  }
  // The dreamer tidies notes: no thinking, where the route can turn it off
  // (dsh's DeepSeek route lists `off`; other routes keep their default
  // rather than fail a request on an effort they do not know).
  // Prepended, so it runs outermost: dsh's own agent listener replaces the
  // effort it is handed.
  const thinkingOff = (agentCtx) =>
    agentCtx.on(
      'agent/request',
      async (_payload, next) => {
        const config = await next()
        return config.provider === 'deepseek-official' ? { ...config, reasoningEffort: 'off' } : config
      },
      true,
    )
  ctx.on('agent/created', ({ agent }) => {
    register(agent.ctx)
    thinkingOff(agent.ctx)
  })

  ctx.tools.guard((execution) =>
    allowed.has(execution.name) ? undefined : `the dreamer holds only the dream tools (${[...allowed].join(', ')})`,
  )
  ctx.on('system-prompt/assemble', async (_assembly, _context, next) => {
    const assembled = await next()
    // The other tools' guidance (`tool:<name>` sections) goes with them.
    return {
      ...assembled,
      sections: assembled.sections.filter((section) => !section.name.startsWith('tool:')),
      tools: assembled.tools.filter((tool) => allowed.has(tool.name)),
    }
  })

  ctx.effect(() => () => sidecar.close(), 'notesoup dream tools')
}
