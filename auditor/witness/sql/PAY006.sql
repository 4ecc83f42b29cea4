-- PAY006 Royal9PaidWithoutQualifyingHand: a Royal 9 paid with no qualifying hand where a
-- random award is possible.
-- proves: the Royal 9 paytable's random award (pack payouts.royal9.paytables.*.random_award,
-- INDEX Ambiguity 25): a Royal 9 wager settled win with no award line, whose first two
-- cards of each hand qualify for no line of the table's paytable, at a paytable that
-- allows a random award: reported, not proven an overpayment. Not in a void round,
-- which returns every wager (the pack's reading of Ambiguity 25): a win there is PAY001's.
-- include: settled_wagers.sql
SELECT 'PAY006' AS rule, NULL::VARCHAR AS table_id, NULL::VARCHAR AS shoe_id, round_id,
       wager_id, NULL::VARCHAR AS discriminator,
       'lose (no qualifying hand)' AS expected,
       'win ' || CASE WHEN payout < 0 THEN '-$' ELSE '$' END || format('{:,}', CAST(floor(abs(payout)) AS BIGINT)) || '.' || lpad(CAST(CAST(abs(payout) * 100 AS BIGINT) % 100 AS VARCHAR), 2, '0') AS logged, NULL::DECIMAL(18, 2) AS impact
FROM settled
WHERE bet = 'royal9' AND royal9_known AND royal9_random AND royal9_line IS NULL
  AND result = 'win' AND award IS NULL AND kind IS DISTINCT FROM 'void'
