// Cordis row `notesoup/dsh/engine` (mounted by default; `install
// --no-engine` leaves it out): notesoup's reset as dsh's compaction engine.
// `/compact` and context-overflow recovery open a fresh notesoup window
// instead of summarizing, and pressure belongs to notesoup's budget. Its
// patch disables `compaction-basic` (one compaction provider per context).
export const name = 'notesoup/dsh/engine'
export const inject = ['notesoup', 'sessions', 'tokenMeter']

const CONTEXT_WINDOW_EXCEEDED = 'CONTEXT_WINDOW_EXCEEDED'

export function apply(ctx) {
  const notesoup = ctx.notesoup

  // One reset, reported in the shape `/compact` reports from: the shadowed
  // nodes, what the meter priced them at, and the marker seq.
  const resetAsCompaction = async (agent, request, midTurn) => {
    const priced = new Map(ctx.tokenMeter.measure(agent.session).nodes.map((node) => [node.seq, node.tokens]))
    const { plan, marker } = await notesoup.reset(agent, request, midTurn)
    const shadowedSeqs = plan.source_event_seqs ?? []
    return {
      plan,
      result: {
        compactionId: plan.window_id,
        summarySeq: marker?.seq ?? null,
        shadowedRange: plan.replace ?? null,
        shadowedSeqs,
        shadowedTokenCount: shadowedSeqs.reduce((sum, seq) => sum + (priced.get(seq) ?? 0), 0),
      },
    }
  }

  const engine = {
    async compactNow(agent, signal) {
      signal?.throwIfAborted()
      return agent.runMaintenance(
        async () => (await resetAsCompaction(agent, { origin: 'normal', trigger: 'compaction' }, false)).result,
      )
    },
    // Pressure belongs to notesoup's own budget, never to a summary. After an
    // overflow reset the retried request carries the continuation.
    async compactIfNeeded(agent, trigger) {
      if (trigger !== 'context-overflow') return null
      const { plan, result } = await resetAsCompaction(agent, { origin: 'forced', trigger: 'overflow' }, true)
      if (plan.followup) agent.session.append('user/message', plan.followup, { surfaceOp: 'append' })
      return result
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
