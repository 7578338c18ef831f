-- When each webhook delivery was last tried: the time the outcome of its
-- latest attempt (success or failure) was recorded, in nanoseconds since
-- the Unix epoch as the table's other times; 0 until it is tried. The
-- attempt that delivers one is its last, so a delivered row gets its
-- delivered time; the attempts of rows still pending or failed were not
-- timed, and they keep 0 until their next.
ALTER TABLE webhook_deliveries ADD COLUMN last_attempt BIGINT NOT NULL DEFAULT 0;

UPDATE webhook_deliveries SET last_attempt = delivered WHERE status = 'delivered';
