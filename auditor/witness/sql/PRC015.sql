-- PRC015 NewBankWithoutBid: a new Bank's first round that logs no winning bid.
-- proves: the highest offer makes the Banker (pack procedures.bank_bid_logged): the first
-- regular round of each Bank (each shoe's first, and wherever the Banker's seat
-- changes; Ambiguity 8) carries `banker_bid`.
-- include: bank_rounds.sql
SELECT 'PRC015' AS rule, NULL::VARCHAR AS table_id, NULL::VARCHAR AS shoe_id, round_id,
       NULL::VARCHAR AS wager_id, NULL::VARCHAR AS discriminator,
       'the winning bid' AS expected, 'no banker_bid' AS logged,
       NULL::DECIMAL(18, 2) AS impact
FROM bank_state
WHERE bid_logged_rule AND kind = 'regular' AND bank_start AND bid_cents IS NULL
