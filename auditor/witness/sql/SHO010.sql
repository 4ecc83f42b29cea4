-- SHO010 SequenceExceedsDecks: a card-reading shoe that saw more cards than its decks
-- hold.
-- proves: the deck rule (pack limits.decks): a `card_sequence` holds at most 52 x decks
-- cards, and no card more than `decks` times.
-- include: shoes_in_force.sql
, read_cards AS (
  SELECT shoe_id, unnest(card_sequence) AS card FROM judged WHERE card_sequence IS NOT NULL
),
over AS (
  SELECT c.shoe_id, string_agg(c.card || ' seen ' || c.seen || ' times', ', '
                               ORDER BY c.card) AS over_text
  FROM (SELECT r.shoe_id, r.card, count(*) AS seen, any_value(j.decks) AS decks
        FROM read_cards r JOIN judged j ON j.shoe_id = r.shoe_id
        GROUP BY r.shoe_id, r.card) c
  WHERE c.seen > c.decks
  GROUP BY c.shoe_id
),
sized AS (
  SELECT j.shoe_id, j.decks, CAST(j.decks AS INTEGER) * 52 AS cards,
         len(j.card_sequence) AS read, o.over_text
  FROM judged j LEFT JOIN over o ON o.shoe_id = j.shoe_id
  WHERE j.card_sequence IS NOT NULL
)
SELECT 'SHO010' AS rule, NULL::VARCHAR AS table_id, shoe_id, NULL::VARCHAR AS round_id,
       NULL::VARCHAR AS wager_id, NULL::VARCHAR AS discriminator,
       'at most ' || cards || ' cards, ' || decks || ' of each' AS expected,
       CASE WHEN read > cards THEN read || ' cards' ELSE over_text END AS logged,
       NULL::DECIMAL(18, 2) AS impact
FROM sized
WHERE read > cards OR over_text IS NOT NULL
