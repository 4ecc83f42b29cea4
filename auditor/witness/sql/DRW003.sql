-- DRW003 BankerDrewOnStand: the Banker's Hand took a third card the rules do not allow.
-- proves: the Banker's drawing rule (pack rule banker_draw): a Natural in either hand
-- stops both; otherwise the Banker's table, read at his two-card count and the value of
-- the Player's third card (NULL where the Player stood), says whether he draws.
WITH audited AS (
  SELECT r.round_id, r.player_cards, r.banker_cards, o.ruleset,
         point_count(r.player_cards[1:2]) AS player_two,
         point_count(r.banker_cards[1:2]) AS banker_two,
         CASE WHEN len(r.player_cards) >= 3 THEN card_value(r.player_cards[3]) END
           AS player_third
  FROM rounds r JOIN shoe_rules o ON o.shoe_id = r.shoe_id
  WHERE quarantine_id(r.round_id) NOT IN (SELECT row_key FROM quarantine WHERE "table" = 'rounds')
)
SELECT 'DRW003' AS rule, NULL::VARCHAR AS table_id, NULL::VARCHAR AS shoe_id, round_id,
       NULL::VARCHAR AS wager_id, NULL::VARCHAR AS discriminator,
       'Banker stands' AS expected, 'Banker drew ' || banker_cards[3] AS logged,
       NULL::DECIMAL(18, 2) AS impact
FROM audited
WHERE len(banker_cards) >= 3 AND len(player_cards) >= 2
  AND (is_natural(ruleset, player_two) OR is_natural(ruleset, banker_two)
       OR NOT banker_draws(ruleset, banker_two, player_third))
