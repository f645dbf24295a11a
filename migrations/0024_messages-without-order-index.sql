-- Up Migration

-- A conversation's messages are read by its id (the dashboard's conversation, a topic's excerpt) and
-- sorted by sentAt and arrival. The primary key (conversation_id, message_id) already finds them, and
-- sorting one conversation's rows costs little; the index on (conversation_id, sent_at, arrival) was a
-- fifth index structure that every new message row paid for (about 9 % of the row's insert and 7 % of
-- its WAL, measured for issue 18). The reads' plans are tested (services/query conversations-plans).
DROP INDEX rm_messages_order;

-- Down Migration
CREATE INDEX rm_messages_order ON rm_messages (conversation_id, sent_at, arrival);
