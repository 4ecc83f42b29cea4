-- SHO013 VoidRoundWithCardsLeft: a round logged void although the card-reading shoe
-- still held cards after its hands.
-- proves: void rounds (pack procedures.void_ends_shoe): a void round is one the shoe has
-- too few cards to complete, so its hands end where `card_sequence` ends: every void
-- round, a shoe's first or a later one (§15(e) voids a round only for want of cards);
-- where the pack does not end the shoe at a void (Chemin de Fer, Ambiguity 7) it is not
-- judged.
-- include: shoes_in_force.sql
-- include: shoe_rounds.sql
, left_over AS (
  SELECT r.round_id,
         j.sequence_length - 1 - j.burn_count - r.hands_end AS cards_left
  FROM shoe_rounds r JOIN judged j ON j.shoe_id = r.shoe_id
  WHERE r.kind = 'void' AND j.sequence_length IS NOT NULL
    AND (j.pack->>'$.procedures.void_ends_shoe.cite') IS NOT NULL
    AND coalesce(CAST(j.pack->>'$.procedures.void_ends_shoe.value' AS BOOLEAN), true)
)
SELECT 'SHO013' AS rule, NULL::VARCHAR AS table_id, NULL::VARCHAR AS shoe_id, round_id,
       NULL::VARCHAR AS wager_id, NULL::VARCHAR AS discriminator,
       'void only when the shoe runs out of cards' AS expected,
       cards_left || CASE WHEN cards_left = 1 THEN ' card' ELSE ' cards' END
         || ' left in the shoe' AS logged,
       NULL::DECIMAL(18, 2) AS impact
FROM left_over
WHERE cards_left > 0
