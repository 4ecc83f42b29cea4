-- PRC006 WagerExceedsBank: a wager against the Banker larger than the Banker's wager.
-- proves: no wager against the Banker above his wager (pack
-- procedures.wagers_against_bank each_at_most_bank): each `player` wager of a round with
-- a Banker's wager is at most that wager.
-- include: bank_rounds.sql
SELECT 'PRC006' AS rule, NULL::VARCHAR AS table_id, NULL::VARCHAR AS shoe_id, w.round_id,
       w.wager_id, NULL::VARCHAR AS discriminator,
       'at most ' || usd_cents_text(s.bank_cents) AS expected,
       usd_cents_text(w.amount_cents) AS logged, NULL::DECIMAL(18, 2) AS impact
FROM bank_wagers w JOIN bank_state s ON s.round_id = w.round_id
WHERE w.bet = 'player'
  AND s.each_at_most_bank
  AND w.amount_cents > s.bank_cents
