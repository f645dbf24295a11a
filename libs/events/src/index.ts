export {
  analysisConversationAnalyzedV1,
  analysisConversationAnalyzedV2,
  analysisEventDefinitions,
  analysisEventSchema,
  analysisFailedV1,
  analysisMessagesAnalyzedV1,
  analysisMessagesAnalyzedV2,
  analysisSignalsDetectedV1,
  analysisThemesAssignedV1,
  analysisTopicDiscoveredV1,
  analysisTopicHiddenV1,
  analysisTopicMergedByUserV1,
  analysisTopicMergedV1,
  analysisTopicRelabeledV1,
  analysisTopicRenamedByUserV1,
  analysisTopicRetiredV1,
  analysisTopicSplitV1,
  analysisTopicUnhiddenV1,
  BUILTIN_SIGNAL_NAMES,
  OTHER_TOPIC_ID,
  signalNameSchema,
} from './analysis-events.ts'
export {
  capturedMessageSchema,
  customFieldsSchema,
  endUserOrganizationSchema,
  endUserSchema,
  endUserSessionSchema,
  messageRoles,
} from './capture-schemas.ts'
export {
  chatbotCreatedV1,
  chatbotDeletedV1,
  chatbotEventDefinitions,
  chatbotEventSchema,
  chatbotKeyRotatedV1,
  chatbotRenamedV1,
  chatbotSettingsChangedV1,
} from './chatbot-events.ts'
export {
  conversationErasedV1,
  conversationEventDefinitions,
  conversationEventSchema,
  conversationMessagesCapturedV1,
  conversationMessagesCapturedV2,
  conversationMetadataUpdatedV1,
  conversationMetadataUpdatedV2,
  conversationStartedV1,
  conversationStartedV2,
  sealedConversationMessagesCapturedV2,
  sealedConversationMetadataUpdatedV2,
  sealedConversationStartedV2,
} from './conversation-events.ts'
export {
  type AnalysisEvent,
  type AnalysisEventType,
  type ChatbotEvent,
  type ChatbotEventType,
  type ConversationEvent,
  type ConversationEventType,
  type DomainEvent,
  domainEventSchema,
  type EventPayload,
  type EventType,
  eventDefinitions,
  eventStreamTypes,
  latestEventVersions,
  type NewEvent,
  type OrganizationEvent,
  type OrganizationEventType,
  type RecordedEvent,
  sealedEvents,
} from './domain-event.ts'
export {
  defineEvent,
  type EventDefinition,
  type EventEnvelope,
  type EventMetadata,
  eventEnvelopeSchema,
  eventMetadataSchema,
  recordedEventSchema,
} from './envelope.ts'
export { InvalidEventError } from './invalid-event-error.ts'
export {
  generateJsonSchemas,
  jsonSchemaFileName,
  jsonSchemaIdBase,
  jsonSchemaIndexFileName,
} from './json-schemas.ts'
export { newEvent } from './new-event.ts'
export {
  NO_CHATBOT_ID,
  type OrganizationRole,
  organizationCreatedV1,
  organizationDeletedV1,
  organizationEventDefinitions,
  organizationEventSchema,
  organizationInvitationRevokedV1,
  organizationMemberInvitedV1,
  organizationMemberJoinedV1,
  organizationMemberRemovedV1,
  organizationMemberRoleChangedV1,
  organizationRoles,
} from './organization-events.ts'
export { type ParseEventResult, parseRecordedEvent, safeParseRecordedEvent } from './parse-event.ts'
export {
  type DeepReadonly,
  type JsonValue,
  journalPositionSchema,
  jsonObjectSchema,
  jsonValueSchema,
  primitiveValueSchema,
  utcTimestampSchema,
} from './primitives.ts'
export {
  openSealedEvent,
  type SealedBox,
  type SealedEventDefinition,
  type SealedRegistry,
  sealedAad,
  sealedBoxSchema,
  sealedForm,
  sealPayload,
} from './sealed.ts'
export { type StreamType, streamTopics, streamTypes, topicName } from './topics.ts'
export { upcast } from './upcasters.ts'
export { createUpcaster, defineUpcaster, type Upcaster } from './upcasting.ts'
