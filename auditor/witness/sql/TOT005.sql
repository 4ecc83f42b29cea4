-- TOT005 NoMoreBetsNotAnnounced: "no more bets" not announced before the cards.
-- proves: the "no more bets" announcement (pack rule procedures.no_more_bets_announced):
-- where the pack has the rule, a regular round logs no_more_bets_at, not after dealt_at.
WITH audited AS (
  SELECT r.round_id, r.kind, r.dealt_at, r.no_more_bets_at,
         rule_pack(o.ruleset)->'$.procedures.no_more_bets_announced' AS announce_rule
  FROM rounds r JOIN shoe_rules o ON o.shoe_id = r.shoe_id
  WHERE quarantine_id(r.round_id) NOT IN (SELECT row_key FROM quarantine WHERE "table" = 'rounds')
),
written AS (
  SELECT *, moment_text(dealt_at) AS dealt_text, moment_text(no_more_bets_at) AS announced_text
  FROM audited
)
SELECT 'TOT005' AS rule, NULL::VARCHAR AS table_id, NULL::VARCHAR AS shoe_id, round_id,
       NULL::VARCHAR AS wager_id, NULL::VARCHAR AS discriminator,
       '"no more bets" by ' || dealt_text AS expected,
       coalesce(announced_text, 'not announced') AS logged, NULL::DECIMAL(18, 2) AS impact
FROM written
WHERE json_type(announce_rule) = 'OBJECT'
  AND coalesce(CAST(announce_rule->>'value' AS BOOLEAN), true)
  AND kind = 'regular'
  AND (no_more_bets_at IS NULL OR no_more_bets_at > dealt_at)
