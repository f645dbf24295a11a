export {
  applyBatch,
  type BatchHandler,
  type BatchOrder,
  type BatchOutcome,
  type BatchSource,
  type SourcedRecord,
} from './apply-batch.ts'
export type { ConsumerOptions, ConsumerStats, EventConsumer, PartitionLag } from './consumer.ts'
export { NOT_IN_JOURNAL, newConsumerStats } from './consumer.ts'
export {
  assertNever,
  ConsumerPipeline,
  DeadLetterError,
  deadLetter,
  drop,
  eachEvent,
  ok,
  type PipelineOptions,
  pipeline,
  RetryBatchError,
  retry,
  type Step,
  type StepItem,
  type StepResult,
} from './consumer-pipeline.ts'
export {
  applyIsolated,
  countDeadLetters,
  DEFAULT_MAX_ATTEMPTS,
  type DeadLetter,
  type DeadLetterSelection,
  type DeadLetterWithRecord,
  discardDeadLetters,
  isTransientError,
  listDeadLetters,
  redriveRequested,
  requestRedrive,
  showDeadLetter,
  startRedrivePoller,
} from './dead-letters.ts'
export { createEventConsumer, EMBEDDED_EVENT_LOG, type EventLogBackend } from './event-log.ts'
export {
  type AppendRequest,
  type AppendResult,
  appendToStream,
  appendToStreams,
  type EventToAppend,
  type ExpectedVersion,
  type JournalDeps,
  lockStreamForUpdate,
  purgeChatbotEvents,
  purgeStreamEvents,
  StreamVersionConflictError,
  streamVersion,
} from './journal.ts'
export {
  type AcknowledgeOutcome,
  acknowledgeJournalConflicts,
  countJournalConflicts,
  type JournalConflict,
  type JournalConflictSelection,
  listJournalConflicts,
} from './journal-conflicts.ts'
export {
  alignCheckpoints,
  createJournalConsumer,
  JOURNAL_TOPIC,
  type JournalConsumerOptions,
  journalTotalLag,
  setCheckpoints,
} from './journal-consumer.ts'
export {
  type JournalPage,
  type RawJournalRecord,
  type ReadJournalOptions,
  readJournal,
  readJournalRaw,
  readStream,
} from './journal-reader.ts'
export {
  createKafka,
  createRelayProducer,
  decodeMessage,
  decodeRecord,
  encodeRawRecord,
  encodeRecord,
  ensureTopics,
  type KafkaSettings,
  sendEvery,
  sendLane,
  waitForTopicLeaders,
} from './kafka.ts'
export {
  createKafkaConsumer,
  deadLetterTopic,
  type KafkaConsumerOptions,
  kafkaGroupId,
} from './kafka-consumer.ts'
export { consumerLag } from './lag.ts'
export {
  createLagProbe,
  type GroupLag,
  journalGroupLag,
  type LagProbe,
  type LagProbeOptions,
  MAX_COUNTED_EVENTS,
  OldestPendingEstimator,
  type PartitionLook,
} from './lag-probe.ts'
export {
  BEHIND_AFTER_SECONDS,
  PIPELINE_STAGES,
  type PipelineStage,
  type PipelineStatus,
  readPipelineStatus,
  STALE_AFTER_SECONDS,
  type StageReport,
  StageReporter,
  type StageReporterOptions,
  type StageStatus,
} from './pipeline-status.ts'
export { eventLogFields, type JournalRecord, type StreamType } from './records.ts'
export {
  DEFAULT_RELAY_BATCH_SIZE,
  DEFAULT_RELAY_MAX_IN_FLIGHT,
  RELAY_GROUP,
  Relay,
  type RelayOptions,
  type RelayStats,
  relayLag,
  republishJournal,
} from './relay.ts'
export { BATCH_RETRY, IN_BATCH_RETRY, RELAY_RETRY } from './retry-policies.ts'
export { STREAM_TYPES, streamTypeOfTopic, topicFor } from './topics.ts'
