-- Up Migration

-- A digest of each message id's message in the ledger (trial2), so that capture can tell a retry (the
-- same message again: nothing to say) from another message sent under an id an earlier capture stored
-- (not stored: a warning, as within one request). An integrator who numbered messages per request lost
-- every later turn without a word. message_digests holds 8 bytes per id, in message_ids' order: the
-- first 8 bytes of the SHA-256 of the message's role and content (services/gateway/src/capture/decide.ts,
-- messageDigest); one bytea, not an array, so that a batch of ten messages grows by 80 bytes, not 300.
-- NULL for the batches written before: their ids are never compared.
ALTER TABLE capture_message_batches ADD COLUMN message_digests bytea
  CHECK (message_digests IS NULL OR octet_length(message_digests) = 8 * cardinality(message_ids));

-- Down Migration
ALTER TABLE capture_message_batches DROP COLUMN message_digests;
