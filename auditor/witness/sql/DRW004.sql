-- DRW004 BankerStoodOnDraw: the Banker's Hand did not take a third card the rules require.
-- proves: the Banker's drawing rule (pack rule banker_draw): with no Natural in either
-- hand, the Banker's table at his two-card count and the Player's third card (NULL where
-- the Player stood) says draw, and he stood. A void round ran out of cards: no finding.
WITH audited AS (
  SELECT r.round_id, r.kind, r.player_cards, r.banker_cards, o.ruleset,
         point_count(r.player_cards[1:2]) AS player_two,
         point_count(r.banker_cards[1:2]) AS banker_two,
         CASE WHEN len(r.player_cards) >= 3 THEN card_value(r.player_cards[3]) END
           AS player_third
  FROM rounds r JOIN shoe_rules o ON o.shoe_id = r.shoe_id
  WHERE quarantine_id(r.round_id) NOT IN (SELECT row_key FROM quarantine WHERE "table" = 'rounds')
)
SELECT 'DRW004' AS rule, NULL::VARCHAR AS table_id, NULL::VARCHAR AS shoe_id, round_id,
       NULL::VARCHAR AS wager_id, NULL::VARCHAR AS discriminator,
       'Banker draws' AS expected, 'Banker stood' AS logged, NULL::DECIMAL(18, 2) AS impact
FROM audited
WHERE kind <> 'void' AND len(banker_cards) = 2 AND len(player_cards) >= 2
  AND NOT is_natural(ruleset, player_two) AND NOT is_natural(ruleset, banker_two)
  AND banker_draws(ruleset, banker_two, player_third)
