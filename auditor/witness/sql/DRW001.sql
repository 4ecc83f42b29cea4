-- DRW001 PlayerDrewOnStand: the Player's Hand took a third card the rules do not allow.
-- proves: the Player's drawing rule (pack rules naturals, player_draw): a Natural in
-- either hand stops both hands; otherwise the Player stands where his two-card count
-- says stand (player_draws false). A count on which he may choose (NULL) is no finding.
WITH audited AS (
  SELECT r.round_id, r.player_cards, r.banker_cards, o.ruleset,
         point_count(r.player_cards[1:2]) AS player_two,
         point_count(r.banker_cards[1:2]) AS banker_two
  FROM rounds r JOIN shoe_rules o ON o.shoe_id = r.shoe_id
  WHERE quarantine_id(r.round_id) NOT IN (SELECT row_key FROM quarantine WHERE "table" = 'rounds')
)
SELECT 'DRW001' AS rule, NULL::VARCHAR AS table_id, NULL::VARCHAR AS shoe_id, round_id,
       NULL::VARCHAR AS wager_id, NULL::VARCHAR AS discriminator,
       'Player stands' AS expected, 'Player drew ' || player_cards[3] AS logged,
       NULL::DECIMAL(18, 2) AS impact
FROM audited
WHERE len(player_cards) >= 3
  AND (is_natural(ruleset, player_two) OR is_natural(ruleset, banker_two)
       OR NOT player_draws(ruleset, player_two))
