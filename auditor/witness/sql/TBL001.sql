-- TBL001 TableSeatsOutOfRange: a table submitted with more or fewer seats than its
-- ruleset allows.
-- proves: the numbered seats (pack limits.seats): each Rules Submission row's `seats`
-- lies within the ruleset's minimum and maximum; a ruleset that states neither (Chemin
-- de Fer) limits nothing. One finding per tables row, named by when it took effect.
WITH audited AS (
  SELECT t.table_id, t.effective_from, t.seats,
         CAST(rule_pack(t.ruleset)->>'$.limits.seats.min' AS INTEGER) AS fewest,
         CAST(rule_pack(t.ruleset)->>'$.limits.seats.max' AS INTEGER) AS most
  FROM tables t
  WHERE t.table_id || '/' || strftime(t.effective_from AT TIME ZONE 'UTC',
                                      '%Y-%m-%d %H:%M:%S.%f+00:00')
        NOT IN (SELECT row_key FROM quarantine WHERE "table" = 'tables')
)
SELECT 'TBL001' AS rule, table_id, NULL::VARCHAR AS shoe_id, NULL::VARCHAR AS round_id,
       NULL::VARCHAR AS wager_id,
       'effective_from=' || strftime(effective_from AT TIME ZONE 'UTC',
                                     '%Y-%m-%dT%H:%M:%S.%fZ') AS discriminator,
       CASE WHEN fewest IS NULL THEN 'at most ' || most || ' seats'
            WHEN most IS NULL THEN 'at least ' || fewest || ' seats'
            ELSE fewest || ' to ' || most || ' seats' END AS expected,
       seats || ' seats' AS logged, NULL::DECIMAL(18, 2) AS impact
FROM audited
WHERE seats < fewest OR seats > most
