-- WAG007 CallMisplaced: a Chemin de Fer call missing, or a call given where none belongs.
-- proves: the calls of the wagers against the Banker (pack bets.permitted calls): a bet
-- the ruleset lists with calls (Suivi, Banco, a partial wager) carries one of them; any
-- other wager carries none.
-- include: offered_wagers.sql
SELECT 'WAG007' AS rule, NULL::VARCHAR AS table_id, NULL::VARCHAR AS shoe_id, round_id,
       wager_id, NULL::VARCHAR AS discriminator,
       CASE WHEN len(calls) = 0 THEN 'no call'
            ELSE 'one of ' || array_to_string(calls, ', ') END AS expected,
       coalesce('call ' || "call", 'no call') AS logged, NULL::DECIMAL(18, 2) AS impact
FROM offered
WHERE CASE WHEN len(calls) = 0 THEN "call" IS NOT NULL
           ELSE "call" IS NULL OR NOT list_contains(calls, "call") END
