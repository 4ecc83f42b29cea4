-- WAG009 RolloverShortOfShare: a House Money rollover above nothing but below the seat's
-- authorised share.
-- proves: the House Money rollover (pack procedures.house_money_rollover): a rollover is
-- nothing or exactly the authorised share of the seat's winning House Money payout due
-- by the cards (Ambiguity 20: "all or a portion thereof, as authorized").
-- include: settled_wagers.sql
-- include: rollover_shares.sql
SELECT 'WAG009' AS rule, NULL::VARCHAR AS table_id, NULL::VARCHAR AS shoe_id, round_id,
       wager_id, NULL::VARCHAR AS discriminator, usd_cents_text(share_cents) AS expected,
       usd_cents_text(seat_rollover_cents) AS logged, NULL::DECIMAL(18, 2) AS impact
FROM rollovers
WHERE NOT unauthorised AND seat_rollover_cents > 0 AND seat_rollover_cents < share_cents
