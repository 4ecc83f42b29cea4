-- COM001 CommissionNotCharged: commission due on a winning wager not charged.
-- proves: the vigorish (pack commission.bets, percents, rounding, none_at_ez): a wager of
-- a bet the pack charges commission on, settled win as the cards give, at a table that
-- charges it (not EZ where the pack exempts EZ tables), owes the table's percent (the
-- nearest the pack allows) of the amount won (a Chemin de Fer Bank: the covered amount),
-- rounded up to the pack's step where commission_rounding, else half up to the cent
-- (vig_rounded); logged with none.
-- include: settled_wagers.sql
SELECT 'COM001' AS rule, NULL::VARCHAR AS table_id, NULL::VARCHAR AS shoe_id, round_id,
       wager_id, NULL::VARCHAR AS discriminator,
       CASE WHEN due_commission < 0 THEN '-$' ELSE '$' END || format('{:,}', CAST(floor(abs(due_commission)) AS BIGINT)) || '.' || lpad(CAST(CAST(abs(due_commission) * 100 AS BIGINT) % 100 AS VARCHAR), 2, '0') AS expected,
       CASE WHEN commission < 0 THEN '-$' ELSE '$' END || format('{:,}', CAST(floor(abs(commission)) AS BIGINT)) || '.' || lpad(CAST(CAST(abs(commission) * 100 AS BIGINT) % 100 AS VARCHAR), 2, '0') AS logged,
       CAST(due_commission - commission AS DECIMAL(18, 2)) AS impact
FROM settled
WHERE result = due_result AND due_commission > 0 AND commission = 0
