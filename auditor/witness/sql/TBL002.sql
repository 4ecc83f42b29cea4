-- TBL002 Royal9TableSeatsNotAllowed: a table offering Royal 9 with a number of seats the
-- Royal 9 rules do not allow.
-- proves: Royal 9 decks and seats (pack limits.royal9.seats): a tables row that offers
-- Royal 9 (`royal9_paytable` set) has one of the seat counts the ruleset lists for a
-- Royal 9 table; a ruleset that lists none limits nothing.
-- include: submitted_tables.sql
, limited AS (
  SELECT table_id, row_discriminator, seats, royal9_paytable,
         CAST(pack->'$.limits.royal9.seats' AS INTEGER[]) AS allowed
  FROM submitted
)
SELECT 'TBL002' AS rule, table_id, NULL::VARCHAR AS shoe_id, NULL::VARCHAR AS round_id,
       NULL::VARCHAR AS wager_id, row_discriminator AS discriminator,
       array_to_string(allowed, ' or ') || ' seats' AS expected,
       seats || ' seats' AS logged, NULL::DECIMAL(18, 2) AS impact
FROM limited
WHERE royal9_paytable IS NOT NULL AND allowed IS NOT NULL AND NOT list_contains(allowed, seats)
