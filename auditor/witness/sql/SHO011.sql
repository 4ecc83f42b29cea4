-- SHO011 CardOutOfSequence: a round whose cards are not the next cards of the
-- card-reading shoe.
-- proves: the dealing order (pack procedures.deal_order): after the burn card and the
-- burned cards, each round (simulated and void rounds too) takes the next cards of the
-- `card_sequence` in the order P1, B1, P2, B2, P3, B3, then its discarded cards. The
-- first card of a round that differs is reported: the card read there, and the round's.
-- include: shoes_in_force.sql
-- include: shoe_rounds.sql
, read AS (
  SELECT shoe_id, unnest(range(len(card_sequence))) AS position,
         unnest(card_sequence) AS read_card
  FROM judged WHERE card_sequence IS NOT NULL
),
dealt_cards AS (
  SELECT r.round_id, r.shoe_id,
         r.first_position + generate_subscripts(r.cards, 1) - 1 AS position,
         unnest(r.cards) AS card
  FROM shoe_rounds r JOIN judged j ON j.shoe_id = r.shoe_id
  WHERE j.sequence_length IS NOT NULL
),
placed AS (
  SELECT d.round_id, d.position, d.card, s.read_card
  FROM dealt_cards d LEFT JOIN read s ON s.shoe_id = d.shoe_id AND s.position = d.position
),
first_wrong AS (
  SELECT round_id, arg_min(card, position) AS card, arg_min(read_card, position) AS read_card
  FROM placed
  WHERE read_card IS DISTINCT FROM card
  GROUP BY round_id
)
SELECT 'SHO011' AS rule, NULL::VARCHAR AS table_id, NULL::VARCHAR AS shoe_id, round_id,
       NULL::VARCHAR AS wager_id, NULL::VARCHAR AS discriminator,
       coalesce(read_card, 'no card') AS expected, card AS logged,
       NULL::DECIMAL(18, 2) AS impact
FROM first_wrong
