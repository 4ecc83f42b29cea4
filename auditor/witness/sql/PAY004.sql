-- PAY004 TieOddsBelowMinimum: a Tie wager taken at odds below the regulation's minimum.
-- proves: the minimum Tie odds (pack payouts.tie.min_odds): every Tie wager at a table
-- whose tie_pays is below it; a winning one (a tie by the cards, or by each hand's first
-- two cards where a Natural was given a third: naturals.drawn_in_error) carries what the
-- table's odds leave short of the minimum on its stake, the others nothing. A void round
-- returns the wager.
-- include: settled_wagers.sql
SELECT 'PAY004' AS rule, NULL::VARCHAR AS table_id, NULL::VARCHAR AS shoe_id, round_id,
       wager_id, NULL::VARCHAR AS discriminator,
       'at least ' || tie_min_odds || ' to 1' AS expected,
       CAST(tie_pays AS VARCHAR) || ' to 1' AS logged,
       CAST(CASE WHEN due_result = 'win'
                 THEN stake * (tie_pays - tie_min_odds)
                 ELSE 0 END AS DECIMAL(18, 2)) AS impact
FROM settled
WHERE bet = 'tie' AND tie_pays < tie_min_odds
