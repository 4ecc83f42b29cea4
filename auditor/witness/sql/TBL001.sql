-- TBL001 TableSeatsOutOfRange: a table submitted with more or fewer seats than its
-- ruleset allows.
-- proves: the numbered seats (pack limits.seats): each Rules Submission row's `seats`
-- lies within the ruleset's minimum and maximum; a ruleset that states neither (Chemin
-- de Fer) limits nothing. One finding per tables row, named by when it took effect.
-- include: submitted_tables.sql
, limited AS (
  SELECT table_id, row_discriminator, seats,
         CAST(pack->>'$.limits.seats.min' AS INTEGER) AS fewest,
         CAST(pack->>'$.limits.seats.max' AS INTEGER) AS most
  FROM submitted
)
SELECT 'TBL001' AS rule, table_id, NULL::VARCHAR AS shoe_id, NULL::VARCHAR AS round_id,
       NULL::VARCHAR AS wager_id, row_discriminator AS discriminator,
       CASE WHEN fewest IS NULL THEN 'at most ' || most || ' seats'
            WHEN most IS NULL THEN 'at least ' || fewest || ' seats'
            ELSE fewest || ' to ' || most || ' seats' END AS expected,
       seats || ' seats' AS logged, NULL::DECIMAL(18, 2) AS impact
FROM limited
WHERE seats < fewest OR seats > most
