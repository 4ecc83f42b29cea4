-- PAY002 PayoutOffOdds: a payout other than the wager's odds or paytable line.
-- proves: the payout odds (pack payouts): a wager settled with the right result is paid
-- Player and Banker at their odds (a Chemin de Fer Bank on the covered amount only), Tie
-- at the table's tie_pays, Dragon Bonus by the table's paytable, Dragon 7, Panda 8 and
-- House Money (one pair, both) at the pack's odds, a fixed Royal 9 line as printed, on
-- amount + rollover; nothing on a lose or push. A progressive line's amount is unknown.
-- A Dragon Bonus paid at another paytable's odds is PAY003's.
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
SELECT 'PAY002' AS rule, NULL::VARCHAR AS table_id, NULL::VARCHAR AS shoe_id, round_id,
       wager_id, NULL::VARCHAR AS discriminator,
       CASE WHEN due_payout < 0 THEN '-$' ELSE '$' END || format('{:,}', CAST(floor(abs(due_payout)) AS BIGINT)) || '.' || lpad(CAST(CAST(abs(due_payout) * 100 AS BIGINT) % 100 AS VARCHAR), 2, '0') AS expected,
       CASE WHEN payout < 0 THEN '-$' ELSE '$' END || format('{:,}', CAST(floor(abs(payout)) AS BIGINT)) || '.' || lpad(CAST(CAST(abs(payout) * 100 AS BIGINT) % 100 AS VARCHAR), 2, '0') AS logged,
       CAST(payout - due_payout AS DECIMAL(18, 2)) AS impact
FROM other
WHERE result = due_result AND due_payout IS NOT NULL AND payout <> due_payout
  AND other_paytable IS NULL
