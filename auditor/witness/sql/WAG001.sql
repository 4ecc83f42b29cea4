-- WAG001 BetNotPermitted: a wager of a bet the ruleset or the table's options do not
-- permit.
-- proves: the permissible wagers (pack bets.permitted): the bet is one the ruleset lists,
-- and where it requires a table option (a Dragon Bonus paytable, EZ Baccarat, House
-- Money, a Royal 9 paytable) the table's options in force have it.
-- include: offered_wagers.sql
SELECT 'WAG001' AS rule, NULL::VARCHAR AS table_id, NULL::VARCHAR AS shoe_id, round_id,
       wager_id, NULL::VARCHAR AS discriminator, 'no ' || bet || ' wager' AS expected,
       bet || ' ' || amount_text AS logged, NULL::DECIMAL(18, 2) AS impact
FROM offered
WHERE NOT permitted
