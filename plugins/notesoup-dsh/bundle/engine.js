// Cordis row `notesoup/dsh/engine` (opt-in): notesoup's reset as dsh's
// compaction engine. `/compact` and context-overflow recovery then open a
// fresh notesoup window instead of summarizing. Its patch disables
// `compaction-basic` (one compaction provider per context).
export const name = 'notesoup/dsh/engine'
export const inject = ['notesoup', 'sessions']

const CONTEXT_WINDOW_EXCEEDED = 'CONTEXT_WINDOW_EXCEEDED'

// The shape `/compact` reports from: the shadowed nodes and the marker seq.
const result = ({ plan, marker }) => ({
  compactionId: plan.window_id,
  summarySeq: marker?.seq ?? null,
  shadowedRange: plan.replace ?? null,
  shadowedSeqs: plan.source_event_seqs ?? [],
  shadowedTokenCount: 0,
})

export function apply(ctx) {
  const notesoup = ctx.notesoup
  const engine = {
    async compactNow(agent, signal) {
      signal?.throwIfAborted()
      return agent.runMaintenance(async () =>
        result(await notesoup.reset(agent, { origin: 'normal', trigger: 'compaction' }, false)),
      )
    },
    // Pressure belongs to notesoup's own budget, never to a summary.
    async compactIfNeeded(agent, trigger) {
      if (trigger !== 'context-overflow') return null
      return result(await notesoup.reset(agent, { origin: 'forced', trigger: 'overflow' }, true))
    },
    async compactRegion() {
      throw new Error('notesoup replaces the whole visible history; it does not compact regions')
    },
    async summarize() {
      throw new Error('notesoup does not summarize; a fresh window boots from notes')
    },
    regionDependencies() {
      throw new Error('notesoup has no region dependencies')
    },
  }
  ctx.provide('compaction', engine)

  // Overflow: reset once, then retry the request from the fresh window.
  const retried = new WeakSet()
  ctx.on('agent/request-error', async ({ agent, failure, signal }, next) => {
    if (failure.code !== CONTEXT_WINDOW_EXCEEDED || signal.aborted || !notesoup.served(agent)) return next()
    if (retried.has(agent)) return next()
    const generation = agent.session.surface.replaceGeneration
    try {
      await engine.compactIfNeeded(agent, 'context-overflow')
    } catch (error) {
      ctx.logger.warn(`notesoup: overflow reset failed; keeping the error: ${error.message}`)
      return next()
    }
    if (agent.session.surface.replaceGeneration <= generation) return next()
    retried.add(agent)
    return { kind: 'retry' }
  })
  ctx.on('agent/status', ({ agent, status }) => {
    if (status === 'idle') retried.delete(agent)
  })
}
