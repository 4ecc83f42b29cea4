-- COM002 CommissionMiscalculated: commission charged at a wrong amount or rounding.
-- proves: the vigorish and its rounding (pack commission.percents, rounding): on a wager
-- that owes commission (COM001's terms), the commission logged is not the table's
-- percent (the nearest the pack allows) of the amount won, rounded up to the pack's step
-- where commission_rounding, else half up to the cent, per wager (vig_rounded).
-- include: settled_wagers.sql
SELECT 'COM002' AS rule, NULL::VARCHAR AS table_id, NULL::VARCHAR AS shoe_id, round_id,
       wager_id, NULL::VARCHAR AS discriminator,
       CASE WHEN due_commission < 0 THEN '-$' ELSE '$' END || format('{:,}', CAST(floor(abs(due_commission)) AS BIGINT)) || '.' || lpad(CAST(CAST(abs(due_commission) * 100 AS BIGINT) % 100 AS VARCHAR), 2, '0') AS expected,
       CASE WHEN commission < 0 THEN '-$' ELSE '$' END || format('{:,}', CAST(floor(abs(commission)) AS BIGINT)) || '.' || lpad(CAST(CAST(abs(commission) * 100 AS BIGINT) % 100 AS VARCHAR), 2, '0') AS logged,
       CAST(due_commission - commission AS DECIMAL(18, 2)) AS impact
FROM settled
WHERE result = due_result AND due_commission > 0 AND commission > 0 AND commission <> due_commission
