-- WAG004 WagerAfterNoMoreBets: a wager placed or changed after "no more bets".
-- proves: the "no more bets" rule (pack procedures.no_wager_after_no_more_bets): where
-- the ruleset gives the rule, no wager's `placed_at` is later than its round's
-- `no_more_bets_at`; a wager or a round without its moment is not judged here.
-- include: offered_wagers.sql
SELECT 'WAG004' AS rule, NULL::VARCHAR AS table_id, NULL::VARCHAR AS shoe_id, round_id,
       wager_id, NULL::VARCHAR AS discriminator,
       'by ' || moment_text(no_more_bets_at) AS expected, moment_text(placed_at) AS logged,
       NULL::DECIMAL(18, 2) AS impact
FROM offered
WHERE no_wager_after_no_more_bets AND placed_at > no_more_bets_at
