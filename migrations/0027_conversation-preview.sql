-- Up Migration

-- The conversation list shows what a support lead scans (issue 30): each conversation's first end-user
-- message, cut, beside its topics. The projector keeps it on the conversation row (libs/views/src/preview.ts,
-- services/projector/src/projections/conversation-fold.ts): the first end-user message with more than
-- whitespace, by sentAt then arrival (the order of the conversation's messages), as one line of at most
-- 160 characters, an ellipsis ending one that was cut. preview_sent_at and preview_arrival are
-- that message's, so that a message captured later with an earlier sentAt takes its place.
-- Like the messages it comes from, it is plaintext in the read model: erasure and chatbot deletion delete
-- the conversation row, preview and all; a rebuild replays it from the (decrypted) events.
ALTER TABLE rm_conversations
  ADD COLUMN preview text,
  ADD COLUMN preview_sent_at timestamptz,
  ADD COLUMN preview_arrival numeric;

-- The conversations already projected, from their messages, by the same rule (whitespace runs made one
-- space, then cut to 159 characters and an ellipsis when longer than 160).
UPDATE rm_conversations c
   SET preview = CASE WHEN char_length(p.line) > 160 THEN rtrim(left(p.line, 159)) || '…' ELSE p.line END,
       preview_sent_at = p.sent_at, preview_arrival = p.arrival
  FROM (SELECT DISTINCT ON (conversation_id) conversation_id, sent_at, arrival,
               btrim(regexp_replace(content, '\s+', ' ', 'g')) AS line
          FROM rm_messages
         WHERE role = 'user' AND content ~ '\S' AND sent_at IS NOT NULL
         ORDER BY conversation_id, sent_at, arrival) p
 WHERE c.id = p.conversation_id;

-- Down Migration
ALTER TABLE rm_conversations DROP COLUMN preview_arrival, DROP COLUMN preview_sent_at, DROP COLUMN preview;
