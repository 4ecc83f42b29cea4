-- PRC002 RoundDealtAfterVoidRound: a round dealt from the shoe after a void round.
-- proves: void rounds (pack procedures.void_ends_shoe): a round the shoe had too few
-- cards to complete ends the shoe, so no round of the same shoe follows it; the first
-- that does is reported. A pack whose voids need not end the shoe (Chemin de Fer,
-- Ambiguity 7) is not judged.
-- include: held_rounds.sql
, voided AS (
  SELECT shoe_id, min(round_no) AS void_no
  FROM held
  WHERE kind = 'void' AND void_ends_shoe
  GROUP BY shoe_id
),
after_void AS (
  SELECT h.round_id, v.void_no,
         row_number() OVER (PARTITION BY h.shoe_id ORDER BY h.round_no) AS place,
         count(*) OVER (PARTITION BY h.shoe_id) AS rounds_after
  FROM held h JOIN voided v ON v.shoe_id = h.shoe_id
  WHERE h.round_no > v.void_no
)
SELECT 'PRC002' AS rule, NULL::VARCHAR AS table_id, NULL::VARCHAR AS shoe_id, round_id,
       NULL::VARCHAR AS wager_id, NULL::VARCHAR AS discriminator,
       'no round after round ' || void_no AS expected,
       rounds_after || CASE WHEN rounds_after = 1 THEN ' round' ELSE ' rounds' END
         || ' after it' AS logged,
       NULL::DECIMAL(18, 2) AS impact
FROM after_void
WHERE place = 1
