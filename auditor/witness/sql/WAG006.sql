-- WAG006 SeatOutOfRange: a wager at a seat the table does not have.
-- proves: the table's numbered seats (pack limits.seats; the table's `seats` in its
-- options in force when the shoe opened): a wager's seat is one of the table's.
-- include: offered_wagers.sql
SELECT 'WAG006' AS rule, NULL::VARCHAR AS table_id, NULL::VARCHAR AS shoe_id, round_id,
       wager_id, NULL::VARCHAR AS discriminator, 'seat 1-' || seats AS expected,
       'seat ' || seat AS logged, NULL::DECIMAL(18, 2) AS impact
FROM offered
WHERE seat > seats
