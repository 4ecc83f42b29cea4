-- PRC012 FreeHandNotAllowed: a Free Hand dealt where the table or the ruleset allows none.
-- proves: Free Hands (pack procedures.free_hands): a round of kind `free` is dealt only
-- at a ruleset with Free Hands and at a table whose options in force set `free_hands`
-- (Ambiguity 11).
-- include: held_rounds.sql
SELECT 'PRC012' AS rule, NULL::VARCHAR AS table_id, NULL::VARCHAR AS shoe_id, round_id,
       NULL::VARCHAR AS wager_id, NULL::VARCHAR AS discriminator,
       CASE WHEN free_hands_rule THEN 'no Free Hand: the table''s options do not allow it'
            ELSE 'no Free Hand in this ruleset' END AS expected,
       'free' AS logged, NULL::DECIMAL(18, 2) AS impact
FROM held
WHERE kind = 'free' AND NOT (free_hands_rule AND coalesce(free_hands, false))
