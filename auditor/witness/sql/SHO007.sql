-- SHO007 CutTooShallow: a cut card placed too close to the top or the bottom.
-- proves: the cut (pack limits.cut.min_from_either_end): the cards above the cut card,
-- and those below it of 52 x decks, are each at least the margin (Ambiguity 15).
-- include: shoes_in_force.sql
, cut AS (
  SELECT *, CAST(pack->>'$.limits.cut.min_from_either_end' AS INT) AS margin,
         CAST(decks AS INTEGER) * 52 AS cards
  FROM judged
)
SELECT 'SHO007' AS rule, NULL::VARCHAR AS table_id, shoe_id, NULL::VARCHAR AS round_id,
       NULL::VARCHAR AS wager_id, NULL::VARCHAR AS discriminator,
       margin || ' to ' || (cards - margin) AS expected, CAST(cut_index AS VARCHAR) AS logged,
       NULL::DECIMAL(18, 2) AS impact
FROM cut
WHERE cut_index IS NOT NULL AND (cut_index < margin OR cards - cut_index < margin)
