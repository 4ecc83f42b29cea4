-- PAY001 WrongResult: a wager settled win, lose or push against the cards.
-- proves: each wager's winning conditions (pack payouts, ez, naturals.drawn_in_error) and
-- void rounds: on the cards as dealt (or, where a Natural was given a third card, each
-- hand's first two), the higher count wins; Banker and Player push on a tie, the Banker
-- at an EZ table on the pack's push event; Tie wins on a tie; Dragon Bonus on a Natural
-- winner or a margin of the table's paytable, equal Naturals by the paytable; Dragon 7
-- and Panda 8 on their event; House Money on a pair in either hand's first two cards;
-- Royal 9 on a line of the table's paytable; a void round returns every wager. The
-- impact is the patron's whole net error (payout less commission, less the stake lost;
-- a Chemin de Fer Bank wins or loses the covered amount only).
-- include: settled_wagers.sql
SELECT 'PAY001' AS rule, NULL::VARCHAR AS table_id, NULL::VARCHAR AS shoe_id, round_id,
       wager_id, NULL::VARCHAR AS discriminator, due_result AS expected, result AS logged,
       CAST(logged_net - due_net AS DECIMAL(18, 2)) AS impact
FROM settled
WHERE due_result IS NOT NULL AND result IS DISTINCT FROM due_result
  -- a Royal 9 paid with no line where the paytable allows a random award is PAY006's,
  -- except in a void round, which returns every wager whatever award is drawn
  AND NOT (bet = 'royal9' AND royal9_random AND royal9_line IS NULL AND result = 'win'
           AND award IS NULL AND kind IS DISTINCT FROM 'void')
