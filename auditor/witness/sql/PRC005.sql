-- PRC005 BankStakeOutOfRange: a Banker's wager outside once to twice his preceding one.
-- proves: the Bank's wager at least equal to, and at most twice, the immediately
-- preceding wager (pack procedures.bank_stake min_multiple, max_multiple): after a
-- Bank's first round, each Banker's wager lies between those multiples of the wager of
-- the Bank's previous round (Ambiguity 2).
-- include: bank_rounds.sql
, ranged AS (
  SELECT *,
         preceding_cents * min_multiple AS low_cents,
         preceding_cents * max_multiple AS high_cents
  FROM bank_state
  WHERE NOT bank_start AND preceding_cents IS NOT NULL
)
SELECT 'PRC005' AS rule, NULL::VARCHAR AS table_id, NULL::VARCHAR AS shoe_id, round_id,
       bank_wager_id AS wager_id, NULL::VARCHAR AS discriminator,
       usd_cents_text(low_cents) || ' to ' || usd_cents_text(high_cents) AS expected,
       usd_cents_text(bank_cents) AS logged, NULL::DECIMAL(18, 2) AS impact
FROM ranged
WHERE bank_cents < low_cents OR bank_cents > high_cents
