-- WAG003 Royal9AtNonconformingTable: a Royal 9 wager at a table without the decks or
-- seats Royal 9 requires.
-- proves: the Royal 9 table (pack limits.royal9): a permitted Royal 9 wager is taken at
-- a table whose options in force have one of the deck counts the ruleset lists and,
-- where it lists seat counts, one of those.
-- include: offered_wagers.sql
SELECT 'WAG003' AS rule, NULL::VARCHAR AS table_id, NULL::VARCHAR AS shoe_id, round_id,
       wager_id, NULL::VARCHAR AS discriminator,
       array_to_string(royal9_decks, ' or ') || ' decks'
         || coalesce(' and ' || array_to_string(royal9_seats, ' or ') || ' seats', '')
         AS expected,
       decks || ' decks and ' || seats || ' seats' AS logged, NULL::DECIMAL(18, 2) AS impact
FROM offered
WHERE bet = 'royal9' AND permitted
  AND NOT (coalesce(list_contains(royal9_decks, decks), false)
           AND (royal9_seats IS NULL OR list_contains(royal9_seats, seats)))
