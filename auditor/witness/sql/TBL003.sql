-- TBL003 CommissionCollectionNotAllowed: a table submitted collecting commission in a way
-- its ruleset does not allow.
-- proves: collecting the commission (pack commission.collection.modes): each tables
-- row's `commission_collection` is one of the ruleset's modes (Chemin de Fer: at payout
-- only, immediately after each round the Banker wins).
-- include: submitted_tables.sql
, collected AS (
  SELECT table_id, row_discriminator, commission_collection,
         CAST(pack->'$.commission.collection.modes' AS VARCHAR[]) AS modes
  FROM submitted
)
SELECT 'TBL003' AS rule, table_id, NULL::VARCHAR AS shoe_id, NULL::VARCHAR AS round_id,
       NULL::VARCHAR AS wager_id, row_discriminator AS discriminator,
       array_to_string(modes, ' or ') AS expected,
       commission_collection AS logged, NULL::DECIMAL(18, 2) AS impact
FROM collected
WHERE NOT list_contains(modes, commission_collection)
