-- PAY005 WrongRoyal9Award: a Royal 9 award line not the one the first four cards give.
-- proves: the Royal 9 paytable (pack payouts.royal9): the line awarded is the first line
-- of the table's paytable, in the pack's order, that the first two cards of each hand
-- qualify for (a Royal 9: a nine and a J, Q or K; suited; the same combination in both
-- hands; a combination the wager's seat posts, or another seat posts: royal9_seats where
-- the table has rows there, else the pack's chairs), and no line where none qualifies
-- or the round is void. Checked where the result logged is the one the cards give.
-- include: settled_wagers.sql
SELECT 'PAY005' AS rule, NULL::VARCHAR AS table_id, NULL::VARCHAR AS shoe_id, round_id,
       wager_id, NULL::VARCHAR AS discriminator,
       coalesce(CASE WHEN kind <> 'void' THEN royal9_line END, 'no line') AS expected,
       coalesce(award, 'no line') AS logged, NULL::DECIMAL(18, 2) AS impact
FROM settled
WHERE bet = 'royal9' AND royal9_known AND result = due_result
  AND award IS DISTINCT FROM CASE WHEN kind <> 'void' THEN royal9_line END
