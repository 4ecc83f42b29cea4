-- PRC011 HolderNotOfTheGame: a seat logged holding the shoe where the game gives it none.
-- proves: who deals (pack procedures.deals): where the dealer deals (Midi and Mini
-- Baccarat) no seat holds the shoe; the curator game logs a curator and never a Banker;
-- Chemin de Fer the Banker and never a curator. The first seat column logged that the
-- pack's `seat_column` is not is reported.
-- include: held_rounds.sql
, foreign_holder AS (
  SELECT *,
         CASE WHEN curator_seat IS NOT NULL AND seat_column IS DISTINCT FROM 'curator_seat'
                THEN 'curator_seat ' || curator_seat
              WHEN banker_seat IS NOT NULL AND seat_column IS DISTINCT FROM 'banker_seat'
                THEN 'banker_seat ' || banker_seat END AS foreign_text
  FROM held
)
SELECT 'PRC011' AS rule, NULL::VARCHAR AS table_id, NULL::VARCHAR AS shoe_id, round_id,
       NULL::VARCHAR AS wager_id, NULL::VARCHAR AS discriminator,
       coalesce('only ' || seat_column, 'the dealer deals: no seat holds the shoe')
         AS expected,
       foreign_text AS logged, NULL::DECIMAL(18, 2) AS impact
FROM foreign_holder
WHERE foreign_text IS NOT NULL
