-- TOT001 WrongPlayerTotal: the Player's point count announced wrongly.
-- proves: the announcement of the final counts (pack rule announce.totals): the count
-- announced is the Point Count of the Player's cards, the last digit of their values' sum
-- (card_value from the packs' card values). A void round has no count to announce.
WITH audited AS (
  SELECT r.round_id, r.kind, r.player_cards AS cards, r.player_total AS announced
  FROM rounds r
  WHERE quarantine_id(r.round_id) NOT IN (SELECT row_key FROM quarantine WHERE "table" = 'rounds')
)
SELECT 'TOT001' AS rule, NULL::VARCHAR AS table_id, NULL::VARCHAR AS shoe_id, round_id,
       NULL::VARCHAR AS wager_id, NULL::VARCHAR AS discriminator,
       CAST(point_count(cards) AS VARCHAR) AS expected, CAST(announced AS VARCHAR) AS logged,
       NULL::DECIMAL(18, 2) AS impact
FROM audited
WHERE kind <> 'void' AND len(cards) >= 2 AND point_count(cards) IS DISTINCT FROM announced
