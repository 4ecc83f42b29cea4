-- SHO002 Royal9DecksWrong: a shoe at a table offering Royal 9 without the decks Royal 9
-- requires.
-- proves: the Royal 9 deck rule (pack limits.royal9.decks): while the table's options
-- offer Royal 9, every shoe holds one of the listed deck counts; a count outside the
-- ruleset's limits is SHO001 alone.
-- include: shoes_in_force.sql
SELECT 'SHO002' AS rule, NULL::VARCHAR AS table_id, shoe_id, NULL::VARCHAR AS round_id,
       NULL::VARCHAR AS wager_id, NULL::VARCHAR AS discriminator,
       array_to_string(royal9_decks, ' or ') || ' decks' AS expected,
       decks || ' decks' AS logged, NULL::DECIMAL(18, 2) AS impact
FROM judged
WHERE decks_permitted AND NOT royal9_decks_ok
