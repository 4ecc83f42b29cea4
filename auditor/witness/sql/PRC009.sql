-- PRC009 MarkerCommissionUncollected: marker commission a seat and patron owed in a shoe
-- not collected before the table's next shoe opened.
-- proves: deferred vig (pack procedures.marker_collected_before_next_shoe): at a table
-- collecting by marker, the commission logged on a seat and patron's wagers of a shoe is
-- collected, in commission_collections rows of that shoe, seat and patron, before the
-- table's next shoe opens. A shortfall no larger than rounding each wager's commission
-- instead of the shoe's total (commission.rounding step_cents; Ambiguity 19) is
-- accepted. The impact is what stayed uncollected.
WITH audited_shoes AS (
  SELECT s.shoe_id, s.table_id, s.opened_at,
         lead(s.opened_at) OVER (PARTITION BY s.table_id ORDER BY s.opened_at, s.shoe_id)
           AS next_open
  FROM shoes s
  WHERE quarantine_id(s.shoe_id) NOT IN (SELECT row_key FROM quarantine WHERE "table" = 'shoes')
),
marker_shoes AS (
  SELECT a.shoe_id, a.next_open, o.commission_rounding,
         CAST(o.commission_percent AS BIGINT) AS percent,
         CAST(json_extract_string(rule_pack(o.ruleset),
                                  '$.commission.rounding.step_cents."'
                                  || o.commission_percent || '"') AS BIGINT) AS step_cents
  FROM audited_shoes a JOIN shoe_rules o ON o.shoe_id = a.shoe_id
  WHERE o.commission_collection = 'marker'
    AND (rule_pack(o.ruleset)->>'$.procedures.marker_collected_before_next_shoe.cite')
        IS NOT NULL
    AND coalesce(CAST(rule_pack(o.ruleset)->>'$.procedures.marker_collected_before_next_shoe.value'
                      AS BOOLEAN), true)
),
owed AS (
  SELECT r.shoe_id, w.seat, w.patron_id,
         sum(CAST(round(w.commission * 100) AS BIGINT)) AS owed_cents,
         sum(CAST(round(w.payout * 100) AS BIGINT)) AS won_cents
  FROM wagers w JOIN rounds r ON r.round_id = w.round_id
       JOIN marker_shoes m ON m.shoe_id = r.shoe_id
  WHERE quarantine_id(w.wager_id) NOT IN (SELECT row_key FROM quarantine WHERE "table" = 'wagers')
    AND quarantine_id(r.round_id) NOT IN (SELECT row_key FROM quarantine WHERE "table" = 'rounds')
    AND w.commission > 0
  GROUP BY r.shoe_id, w.seat, w.patron_id
),
collected AS (
  SELECT c.shoe_id, c.seat, c.patron_id,
         coalesce(sum(CAST(round(c.amount * 100) AS BIGINT))
                    FILTER (WHERE m.next_open IS NULL OR c.collected_at < m.next_open), 0)
           AS in_time_cents
  FROM commission_collections c JOIN marker_shoes m ON m.shoe_id = c.shoe_id
  WHERE quarantine_id(c.collection_id) NOT IN (SELECT row_key FROM quarantine
                                WHERE "table" = 'commission_collections')
  GROUP BY c.shoe_id, c.seat, c.patron_id
),
judged AS (
  SELECT o.*, coalesce(c.in_time_cents, 0) AS in_time_cents,
         -- The commission of the shoe's wins rounded once, in hundredths of a cent first.
         CASE WHEN m.commission_rounding
              THEN (o.won_cents * m.percent + m.step_cents * 100 - 1)
                   // (m.step_cents * 100) * m.step_cents
              ELSE (o.won_cents * m.percent + 50) // 100 END AS once_cents
  FROM owed o JOIN marker_shoes m ON m.shoe_id = o.shoe_id
       LEFT JOIN collected c ON c.shoe_id = o.shoe_id AND c.seat = o.seat
                            AND c.patron_id IS NOT DISTINCT FROM o.patron_id
)
SELECT 'PRC009' AS rule, NULL::VARCHAR AS table_id, shoe_id, NULL::VARCHAR AS round_id,
       NULL::VARCHAR AS wager_id,
       'seat=' || seat || ';patron=' || coalesce(patron_id, '') AS discriminator,
       usd_cents_text(owed_cents) AS expected, usd_cents_text(in_time_cents) AS logged,
       CAST(CAST(owed_cents - in_time_cents AS DECIMAL(18, 0)) * 0.01 AS DECIMAL(18, 2)) AS impact
FROM judged
WHERE owed_cents - in_time_cents > greatest(coalesce(owed_cents - once_cents, 0), 0)
