// The notesoup-dsh sidecar: one `notesoup-dsh serve` (or, for the dreamer,
// `notesoup-dsh dream-tools`) child per plugin fiber,
// spoken to in JSON lines. Every decision is the sidecar's; this file only
// moves requests and answers. If the child is missing or dies, every pending
// and later request rejects with NotesoupUnavailable and dsh carries on.
import { spawn } from 'node:child_process'
import { createInterface } from 'node:readline'

export const PROTOCOL_VERSION = 1

export class NotesoupUnavailable extends Error {
  constructor(message) {
    super(`notesoup unavailable: ${message}`)
    this.name = 'NotesoupUnavailable'
  }
}

export class Sidecar {
  constructor(binary, env, logger, args = ['serve']) {
    this.logger = logger
    this.nextId = 1
    this.pending = new Map()
    this.down = null
    try {
      this.child = spawn(binary, args, { stdio: ['pipe', 'pipe', 'inherit'], env })
    } catch (error) {
      this.fail(`could not start ${binary}: ${error.message}`)
      return
    }
    this.child.on('error', (error) => this.fail(`could not start ${binary}: ${error.message}`))
    this.child.on('exit', (code, signal) => this.fail(`sidecar exited (${signal ?? code})`))
    this.child.stdin.on('error', (error) => this.fail(`sidecar pipe: ${error.message}`))
    createInterface({ input: this.child.stdout }).on('line', (line) => this.receive(line))
  }

  receive(line) {
    let answer
    try {
      answer = JSON.parse(line)
    } catch {
      this.fail(`unreadable sidecar line: ${line.slice(0, 200)}`)
      return
    }
    const waiter = this.pending.get(answer.id)
    if (!waiter) return
    this.pending.delete(answer.id)
    if (answer.error) {
      const error = new Error(`${answer.error.code}: ${answer.error.message}`)
      error.code = answer.error.code
      waiter.reject(error)
    } else {
      waiter.resolve(answer.result)
    }
  }

  fail(reason) {
    if (this.down) return
    this.down = reason
    this.logger.warn(`notesoup unavailable: ${reason}; dsh continues without notesoup`)
    for (const waiter of this.pending.values()) waiter.reject(new NotesoupUnavailable(reason))
    this.pending.clear()
  }

  request(op, params = {}) {
    if (this.down) return Promise.reject(new NotesoupUnavailable(this.down))
    const id = this.nextId++
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject })
      this.child.stdin.write(`${JSON.stringify({ id, op, params })}\n`)
    })
  }

  close() {
    this.down ??= 'closed'
    for (const waiter of this.pending.values()) waiter.reject(new NotesoupUnavailable('closed'))
    this.pending.clear()
    this.child?.stdin.end()
    this.child?.kill()
  }
}
