-- PAY003 DragonBonusOffPaytable: a Dragon Bonus paid at another paytable's odds.
-- proves: the Dragon Bonus paytable of the Rules Submission (pack payouts.dragon_bonus):
-- a winning Dragon Bonus settled win is paid at the odds of the table's
-- dragon_bonus_paytable for its margin (or Natural winner); a payout equal to the stake
-- at the odds another of the pack's paytables (A, B, C, the first that fits) gives, and
-- not the table's, is this finding; any other wrong payout is PAY002's.
-- include: settled_wagers.sql
,
other AS (
  SELECT *,
         CASE WHEN bet IN ('dragon_bonus_banker', 'dragon_bonus_player')
                   AND due_result = 'win' AND result = 'win' AND payout <> due_payout THEN
           (SELECT min(t) FROM (VALUES ('A'), ('B'), ('C')) AS p(t)
            WHERE CAST(CASE WHEN own_natural THEN pack->'$.payouts.dragon_bonus'->t->>'natural_winner'
                            ELSE pack->'$.payouts.dragon_bonus'->t->'win_by'->>CAST(margin AS VARCHAR)
                       END AS BIGINT) IS DISTINCT FROM odds
              AND CAST(CASE WHEN own_natural THEN pack->'$.payouts.dragon_bonus'->t->>'natural_winner'
                            ELSE pack->'$.payouts.dragon_bonus'->t->'win_by'->>CAST(margin AS VARCHAR)
                       END AS BIGINT) * stake = payout)
         END AS other_paytable
  FROM settled
)
SELECT 'PAY003' AS rule, NULL::VARCHAR AS table_id, NULL::VARCHAR AS shoe_id, round_id,
       wager_id, NULL::VARCHAR AS discriminator,
       CASE WHEN due_payout < 0 THEN '-$' ELSE '$' END || format('{:,}', CAST(floor(abs(due_payout)) AS BIGINT)) || '.' || lpad(CAST(CAST(abs(due_payout) * 100 AS BIGINT) % 100 AS VARCHAR), 2, '0') AS expected,
       CASE WHEN payout < 0 THEN '-$' ELSE '$' END || format('{:,}', CAST(floor(abs(payout)) AS BIGINT)) || '.' || lpad(CAST(CAST(abs(payout) * 100 AS BIGINT) % 100 AS VARCHAR), 2, '0') AS logged,
       CAST(payout - due_payout AS DECIMAL(18, 2)) AS impact
FROM other
WHERE result = due_result AND due_payout IS NOT NULL AND payout <> due_payout
  AND other_paytable IS NOT NULL
