-- SHO003 DecksDifferFromTable: a shoe holding another number of decks than the table's
-- Rules Submission.
-- proves: the deck limits as submitted (the `decks` of the tables row in force when the
-- shoe opened), where the count is otherwise permitted (else SHO001 or SHO002).
-- include: shoes_in_force.sql
SELECT 'SHO003' AS rule, NULL::VARCHAR AS table_id, shoe_id, NULL::VARCHAR AS round_id,
       NULL::VARCHAR AS wager_id, NULL::VARCHAR AS discriminator,
       table_decks || ' decks' AS expected, decks || ' decks' AS logged,
       NULL::DECIMAL(18, 2) AS impact
FROM judged
WHERE decks_permitted AND royal9_decks_ok AND decks IS DISTINCT FROM table_decks
