-- SHO001 DecksOutOfRange: a shoe holding a number of decks the ruleset does not permit.
-- proves: the deck limits (pack limits.decks), each shoe one of two equal batches of the
-- permitted total where an automated shuffler's batches must be equal
-- (limits.automated_shuffler).
-- include: shoes_in_force.sql
SELECT 'SHO001' AS rule, NULL::VARCHAR AS table_id, shoe_id, NULL::VARCHAR AS round_id,
       NULL::VARCHAR AS wager_id, NULL::VARCHAR AS discriminator,
       permitted_words AS expected, decks || ' decks' AS logged, NULL::DECIMAL(18, 2) AS impact
FROM judged
WHERE NOT decks_permitted
