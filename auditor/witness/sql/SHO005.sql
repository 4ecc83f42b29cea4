-- SHO005 BurnCountWrong: burned cards that do not match the value of the burn card.
-- proves: the burn (pack procedures.burn, burn_values): after the exposed first card as
-- many more are burned as it counts, 2-9 their face value, ten and faces 10, ace 1.
-- include: shoes_in_force.sql
, valued AS (
  SELECT j.*,
         (SELECT CASE WHEN v.value = 'face' THEN TRY_CAST(j.burn_card[1] AS INT)
                      ELSE TRY_CAST(v.value AS INT) END
          FROM (SELECT unnest(from_json(j.pack->'$.burn_values',
                                        '[{"ranks": "VARCHAR", "value": "VARCHAR"}]')) AS v)
          WHERE contains(v.ranks, j.burn_card[1]) AND len(j.burn_card[1]) = 1) AS burn_value
  FROM judged j
)
SELECT 'SHO005' AS rule, NULL::VARCHAR AS table_id, shoe_id, NULL::VARCHAR AS round_id,
       NULL::VARCHAR AS wager_id, NULL::VARCHAR AS discriminator,
       CAST(burn_value AS VARCHAR) AS expected, CAST(burn_count AS VARCHAR) AS logged,
       NULL::DECIMAL(18, 2) AS impact
FROM valued
WHERE burn_count IS DISTINCT FROM burn_value
