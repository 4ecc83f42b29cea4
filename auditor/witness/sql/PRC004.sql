-- PRC004 BankStakeBelowBid: the first wager of a new Bank below the bid that won it.
-- proves: the Bank's first wager at least the bid (pack procedures.bank_stake
-- first_at_least_bid): on the round that logs `banker_bid`, the Banker's wager is at
-- least that bid.
-- include: bank_rounds.sql
SELECT 'PRC004' AS rule, NULL::VARCHAR AS table_id, NULL::VARCHAR AS shoe_id, round_id,
       bank_wager_id AS wager_id, NULL::VARCHAR AS discriminator,
       'at least ' || usd_cents_text(bid_cents) AS expected, usd_cents_text(bank_cents) AS logged,
       NULL::DECIMAL(18, 2) AS impact
FROM bank_state
WHERE first_at_least_bid AND bank_cents < bid_cents
