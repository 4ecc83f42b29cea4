-- SHO004 ShufflerBatchesUnequal: consecutive shoes of an automated shuffler's two batches
-- holding different numbers of decks.
-- proves: two batches with equal numbers of decks (pack limits.automated_shuffler
-- two_batches and equal_batches): at such a table each shoe, alternate batches, holds as
-- many decks as the shoe before it, where both match the table's options (else SHO003).
-- include: shoes_in_force.sql
SELECT 'SHO004' AS rule, NULL::VARCHAR AS table_id, shoe_id, NULL::VARCHAR AS round_id,
       NULL::VARCHAR AS wager_id, NULL::VARCHAR AS discriminator,
       previous_decks || ' decks' AS expected, decks || ' decks' AS logged,
       NULL::DECIMAL(18, 2) AS impact
FROM judged
WHERE halves AND coalesce(previous_automated_shuffler, false)
  AND decks = table_decks AND previous_decks = previous_table_decks
  AND decks <> previous_decks
