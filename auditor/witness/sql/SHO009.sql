-- SHO009 CardSeenTooOften: a card logged more often than the shoe's decks hold.
-- proves: the deck rule (pack limits.decks): counting the burn card, every card dealt to
-- a hand and every discarded card of the shoe, no card (rank and suit) appears more than
-- `decks` times.
-- include: shoes_in_force.sql
-- include: shoe_rounds.sql
, logged_cards AS (
  SELECT shoe_id, burn_card AS card FROM judged WHERE burn_card IS NOT NULL
  UNION ALL
  SELECT r.shoe_id, unnest(r.cards) AS card
  FROM shoe_rounds r JOIN judged j ON j.shoe_id = r.shoe_id
  WHERE j.burn_card IS NOT NULL
),
over AS (
  SELECT c.shoe_id, j.decks, c.card, count(*) AS seen
  FROM logged_cards c JOIN judged j ON j.shoe_id = c.shoe_id
  GROUP BY c.shoe_id, j.decks, c.card
  HAVING count(*) > j.decks
)
SELECT 'SHO009' AS rule, NULL::VARCHAR AS table_id, shoe_id, NULL::VARCHAR AS round_id,
       NULL::VARCHAR AS wager_id, NULL::VARCHAR AS discriminator,
       'at most ' || decks || ' of each card' AS expected,
       string_agg(card || ' seen ' || seen || ' times', ', ' ORDER BY card) AS logged,
       NULL::DECIMAL(18, 2) AS impact
FROM over
GROUP BY shoe_id, decks
