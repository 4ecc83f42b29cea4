-- COM004 CollectionAtTableWithoutMarker: a commission collection at a table that does not
-- collect by marker.
-- proves: collecting the commission (pack commission.collection): a marker collection
-- (commission_collections) belongs only to a shoe of a table whose options in force
-- collect by marker; at any other table commission is taken with the payout.
WITH audited AS (
  SELECT c.collection_id, c.shoe_id, c.amount, o.commission_collection
  FROM commission_collections c JOIN shoe_rules o ON o.shoe_id = c.shoe_id
  WHERE quarantine_id(c.collection_id) NOT IN (SELECT row_key FROM quarantine
                                WHERE "table" = 'commission_collections')
)
SELECT 'COM004' AS rule, NULL::VARCHAR AS table_id, shoe_id, NULL::VARCHAR AS round_id,
       NULL::VARCHAR AS wager_id, 'collection=' || coalesce(collection_id, '') AS discriminator,
       'no marker collection: commission taken at payout' AS expected,
       CASE WHEN amount < 0 THEN '-$' ELSE '$' END || format('{:,}', CAST(floor(abs(amount)) AS BIGINT)) || '.' || lpad(CAST(CAST(abs(amount) * 100 AS BIGINT) % 100 AS VARCHAR), 2, '0') || ' collected' AS logged, NULL::DECIMAL(18, 2) AS impact
FROM audited
WHERE commission_collection <> 'marker'
