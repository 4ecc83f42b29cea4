-- PRC001 HandDealtAfterLastHand: more hands dealt after the round in which the cover card
-- appeared than the last-hand rule allows.
-- proves: the last hand (pack procedures.last_hand_after_cover): after the first round
-- logged with `cover_card_drawn`, only `hands_after` more hands of the kinds the pack
-- counts (counted_kinds; Ambiguity 10) are dealt; the first hand beyond them is
-- reported. A pack that switches the rule off (Chemin de Fer, Ambiguity 5) allows any.
-- include: held_rounds.sql
, covered AS (
  SELECT *, min(round_no) OVER (PARTITION BY shoe_id) AS first_cover_no
  FROM held WHERE last_hand_rule AND cover_card_drawn
),
after_cover AS (
  SELECT *, row_number() OVER (PARTITION BY shoe_id ORDER BY round_no) AS hand_after,
         count(*) OVER (PARTITION BY shoe_id) AS hands_dealt
  FROM covered
  WHERE round_no > first_cover_no
    AND list_contains(counted_kinds, kind)
)
SELECT 'PRC001' AS rule, NULL::VARCHAR AS table_id, NULL::VARCHAR AS shoe_id, round_id,
       NULL::VARCHAR AS wager_id, NULL::VARCHAR AS discriminator,
       hands_after || CASE WHEN hands_after = 1 THEN ' hand' ELSE ' hands' END
         || ' after round ' || first_cover_no AS expected,
       hands_dealt || CASE WHEN hands_dealt = 1 THEN ' hand' ELSE ' hands' END AS logged,
       NULL::DECIMAL(18, 2) AS impact
FROM after_cover
WHERE hand_after = hands_after + 1
