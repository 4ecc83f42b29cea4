-- COM003 CommissionNotDue: commission charged where none is due.
-- proves: the vigorish (pack commission.bets, exempt, none_at_ez): commission logged on a
-- wager settled as the cards give that owes none: a bet the pack charges no commission
-- on, a wager at an EZ table where the pack exempts them, a wager lost or pushed.
-- include: settled_wagers.sql
SELECT 'COM003' AS rule, NULL::VARCHAR AS table_id, NULL::VARCHAR AS shoe_id, round_id,
       wager_id, NULL::VARCHAR AS discriminator,
       '$0.00' AS expected,
       CASE WHEN commission < 0 THEN '-$' ELSE '$' END || format('{:,}', CAST(floor(abs(commission)) AS BIGINT)) || '.' || lpad(CAST(CAST(abs(commission) * 100 AS BIGINT) % 100 AS VARCHAR), 2, '0') AS logged,
       CAST(due_commission - commission AS DECIMAL(18, 2)) AS impact
FROM settled
WHERE result = due_result AND due_commission = 0 AND commission > 0
