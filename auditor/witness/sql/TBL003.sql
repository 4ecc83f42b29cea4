-- TBL003 CommissionCollectionNotAllowed: a table submitted collecting commission in a way
-- its ruleset does not allow.
-- proves: collecting the commission (pack commission.collection.modes): each tables
-- row's `commission_collection` is one of the ruleset's modes (Chemin de Fer: at payout
-- only, immediately after each round the Banker wins).
WITH audited AS (
  SELECT t.table_id, t.effective_from, t.commission_collection,
         CAST(rule_pack(t.ruleset)->'$.commission.collection.modes' AS VARCHAR[]) AS modes
  FROM tables t
  WHERE t.table_id || '/' || strftime(t.effective_from AT TIME ZONE 'UTC',
                                      '%Y-%m-%d %H:%M:%S.%f+00:00')
        NOT IN (SELECT row_key FROM quarantine WHERE "table" = 'tables')
)
SELECT 'TBL003' AS rule, table_id, NULL::VARCHAR AS shoe_id, NULL::VARCHAR AS round_id,
       NULL::VARCHAR AS wager_id,
       'effective_from=' || strftime(effective_from AT TIME ZONE 'UTC',
                                     '%Y-%m-%dT%H:%M:%S.%fZ') AS discriminator,
       array_to_string(modes, ' or ') AS expected,
       commission_collection AS logged, NULL::DECIMAL(18, 2) AS impact
FROM audited
WHERE NOT list_contains(modes, commission_collection)
