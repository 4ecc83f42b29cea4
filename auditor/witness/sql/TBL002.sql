-- TBL002 Royal9TableSeatsNotAllowed: a table offering Royal 9 with a number of seats the
-- Royal 9 rules do not allow.
-- proves: Royal 9 decks and seats (pack limits.royal9.seats): a tables row that offers
-- Royal 9 (`royal9_paytable` set) has one of the seat counts the ruleset lists for a
-- Royal 9 table; a ruleset that lists none limits nothing.
WITH audited AS (
  SELECT t.table_id, t.effective_from, t.seats, t.royal9_paytable,
         CAST(rule_pack(t.ruleset)->'$.limits.royal9.seats' AS INTEGER[]) AS allowed
  FROM tables t
  WHERE t.table_id || '/' || strftime(t.effective_from AT TIME ZONE 'UTC',
                                      '%Y-%m-%d %H:%M:%S.%f+00:00')
        NOT IN (SELECT row_key FROM quarantine WHERE "table" = 'tables')
)
SELECT 'TBL002' AS rule, table_id, NULL::VARCHAR AS shoe_id, NULL::VARCHAR AS round_id,
       NULL::VARCHAR AS wager_id,
       'effective_from=' || strftime(effective_from AT TIME ZONE 'UTC',
                                     '%Y-%m-%dT%H:%M:%S.%fZ') AS discriminator,
       array_to_string(allowed, ' or ') || ' seats' AS expected,
       seats || ' seats' AS logged, NULL::DECIMAL(18, 2) AS impact
FROM audited
WHERE royal9_paytable IS NOT NULL AND allowed IS NOT NULL AND NOT list_contains(allowed, seats)
