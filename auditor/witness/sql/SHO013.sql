-- SHO013 VoidRoundWithCardsLeft: a round logged void although the card-reading shoe
-- still held cards after its hands.
-- proves: void rounds (pack procedures.void_ends_shoe): a void round is one the shoe has
-- too few cards to complete, so its hands end where `card_sequence` ends; where the pack
-- does not end the shoe at a void (Chemin de Fer, Ambiguity 7) it is not judged.
-- include: shoes_in_force.sql
-- include: shoe_rounds.sql
, first_void AS (
  SELECT r.shoe_id, min(r.round_no) AS void_no
  FROM shoe_rounds r JOIN judged j ON j.shoe_id = r.shoe_id
  WHERE r.kind = 'void'
    AND j.pack->>'$.procedures.void_ends_shoe.cite' IS NOT NULL
    AND coalesce(CAST(j.pack->>'$.procedures.void_ends_shoe.value' AS BOOLEAN), true)
  GROUP BY r.shoe_id
),
left_over AS (
  SELECT r.round_id,
         len(j.card_sequence) - 1 - j.burn_count - r.hands_end AS cards_left
  FROM first_void v JOIN shoe_rounds r ON r.shoe_id = v.shoe_id AND r.round_no = v.void_no
       JOIN judged j ON j.shoe_id = v.shoe_id
  WHERE j.card_sequence IS NOT NULL
)
SELECT 'SHO013' AS rule, NULL::VARCHAR AS table_id, NULL::VARCHAR AS shoe_id, round_id,
       NULL::VARCHAR AS wager_id, NULL::VARCHAR AS discriminator,
       'void only when the shoe runs out of cards' AS expected,
       cards_left || CASE WHEN cards_left = 1 THEN ' card' ELSE ' cards' END
         || ' left in the shoe' AS logged,
       NULL::DECIMAL(18, 2) AS impact
FROM left_over
WHERE cards_left > 0
