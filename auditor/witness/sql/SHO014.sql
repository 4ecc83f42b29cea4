-- SHO014 DiscardCountWrong: an irregularity that discarded more or fewer cards than its
-- procedure takes.
-- proves: the irregularity procedures (pack procedures.irregular_discards): a round's
-- `discarded_after` holds one of the procedure's counts of cards (two at the Baccarat
-- games), or the first, disclosed, card and as many more as its rank gives
-- (plus_card_value: at Chemin de Fer its value, a ten-value card 0, 1 or 10;
-- Ambiguity 6). A rank the pack does not value is not judged.
WITH audited AS (
  SELECT r.round_id, r.discarded_after, r.discarded_after[1][1] AS first_rank,
         rule_pack(o.ruleset) AS pack
  FROM rounds r JOIN shoe_rules o ON o.shoe_id = r.shoe_id
  WHERE quarantine_id(r.round_id) NOT IN (SELECT row_key FROM quarantine WHERE "table" = 'rounds')
    AND quarantine_id(r.shoe_id) NOT IN (SELECT row_key FROM quarantine WHERE "table" = 'shoes')
    AND len(r.discarded_after) > 0
),
allowed AS (
  SELECT *,
         list_sort(list_distinct(
           CAST(pack->'$.procedures.irregular_discards.counts' AS INTEGER[])
           || list_transform(coalesce(CAST(json_extract(pack,
                                '$.procedures.irregular_discards.plus_card_value.' || first_rank)
                                AS INTEGER[]), []), lambda n: n + 1))) AS counts
  FROM audited
  WHERE coalesce(json_type(pack, '$.procedures.irregular_discards'), 'NULL') <> 'NULL'
    AND list_bool_or(list_transform(
          from_json(pack->'$.card_values', '[{"ranks": "VARCHAR"}]'),
          lambda v: contains(v.ranks, first_rank)))
)
SELECT 'SHO014' AS rule, NULL::VARCHAR AS table_id, NULL::VARCHAR AS shoe_id, round_id,
       NULL::VARCHAR AS wager_id, NULL::VARCHAR AS discriminator,
       array_to_string(counts, ' or ')
         || CASE WHEN list_max(counts) = 1 THEN ' card' ELSE ' cards' END AS expected,
       len(discarded_after) || CASE WHEN len(discarded_after) = 1 THEN ' card' ELSE ' cards' END
         || ': ' || array_to_string(discarded_after, ' ') AS logged,
       NULL::DECIMAL(18, 2) AS impact
FROM allowed
WHERE NOT list_contains(counts, len(discarded_after))
