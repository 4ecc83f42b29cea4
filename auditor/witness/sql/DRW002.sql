-- DRW002 PlayerStoodOnDraw: the Player's Hand did not take a third card the rules require.
-- proves: the Player's drawing rule (pack rule player_draw): with no Natural in either
-- hand, a two-card count on which the Player must draw (player_draws true) takes a
-- third card. A void round ran out of cards: a missing card there is no misdeal.
WITH audited AS (
  SELECT r.round_id, r.kind, r.player_cards, r.banker_cards, o.ruleset,
         point_count(r.player_cards[1:2]) AS player_two,
         point_count(r.banker_cards[1:2]) AS banker_two
  FROM rounds r JOIN shoe_rules o ON o.shoe_id = r.shoe_id
  WHERE quarantine_id(r.round_id) NOT IN (SELECT row_key FROM quarantine WHERE "table" = 'rounds')
)
SELECT 'DRW002' AS rule, NULL::VARCHAR AS table_id, NULL::VARCHAR AS shoe_id, round_id,
       NULL::VARCHAR AS wager_id, NULL::VARCHAR AS discriminator,
       'Player draws' AS expected, 'Player stood' AS logged, NULL::DECIMAL(18, 2) AS impact
FROM audited
WHERE kind <> 'void' AND len(player_cards) = 2 AND len(banker_cards) >= 2
  AND NOT is_natural(ruleset, player_two) AND NOT is_natural(ruleset, banker_two)
  AND player_draws(ruleset, player_two)
