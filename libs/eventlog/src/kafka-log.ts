import { type LogEntry, type logCreator, logLevel } from 'kafkajs'
import { errorCodes } from 'kafkajs/src/protocol/error.js'

/** Where kafkajs's log lines go: the process's logger (pino's methods). */
export interface KafkaLogTarget {
  error(fields: object, message: string): void
  warn(fields: object, message: string): void
  info(fields: object, message: string): void
  debug(fields: object, message: string): void
}

/**
 * What a broker answers while a partition's leader or a group's coordinator is still being settled: on a
 * first start, right after the topics (and the brokers' own `__consumer_offsets`) are created, until a
 * broker hosts them; after a broker dies, until their leadership moves. kafkajs retries each of them
 * (and the topics' wait, waitForTopicLeaders, asks until every partition answers), so one is no failure;
 * what gives up after its retries says so where it is used, at error.
 */
const SETTLING = new Set([
  'UNKNOWN_TOPIC_OR_PARTITION',
  'LEADER_NOT_AVAILABLE',
  'NOT_LEADER_FOR_PARTITION',
  'GROUP_LOAD_IN_PROGRESS',
  'GROUP_COORDINATOR_NOT_AVAILABLE',
  'NOT_COORDINATOR_FOR_GROUP',
])
/** The messages kafkajs logs those errors with (its error table's). */
const SETTLING_MESSAGES = new Set(errorCodes.filter((e) => SETTLING.has(e.type)).map((e) => e.message))

/**
 * kafkajs's log lines into the process's logger, `[namespace] message` as kafkajs writes them and its
 * fields beside. kafkajs logs every error answer of a broker at ERROR, retried or not: a first start on
 * a new Kafka logged some 14 (bench/FINDINGS.md, mend3) that an operator reads as failure. Those of
 * SETTLING go to debug.
 */
export function kafkaLogCreator(target: KafkaLogTarget): logCreator {
  // The consumer groups whose consumer last crashed on a SETTLING error: its "Restarting" line follows.
  const restarting = new Set<unknown>()
  const isSettling = (namespace: string, log: LogEntry['log']): boolean => {
    const { message, error, groupId } = log as { message: string; error?: unknown; groupId?: unknown }
    if (namespace === 'Connection') return typeof error === 'string' && SETTLING_MESSAGES.has(error)
    if (namespace !== 'Consumer') return false
    // A consumer that joins before its group's coordinator has loaded crashes and restarts itself.
    if (message.startsWith(CRASH)) {
      const settling = SETTLING_MESSAGES.has(message.slice(CRASH.length))
      if (settling) restarting.add(groupId)
      else restarting.delete(groupId)
      return settling
    }
    return message.startsWith('Restarting the consumer') && restarting.delete(groupId)
  }
  return () =>
    ({ namespace, level, log }: LogEntry) => {
      const { message, timestamp: _timestamp, logger: _logger, ...fields } = log
      const line = `[${namespace}] ${message}`
      const entry = { ...fields, logger: 'kafkajs' }
      if (level === logLevel.ERROR && !isSettling(namespace, log)) target.error(entry, line)
      else if (level === logLevel.WARN) target.warn(entry, line)
      else if (level === logLevel.INFO) target.info(entry, line)
      else target.debug(entry, line)
    }
}

/** How kafkajs's consumer logs a crash on a protocol error, before the error's message. */
const CRASH = 'Crash: KafkaJSProtocolError: '
