-- PRC010 HolderSeatOutOfRange: the shoe held at a seat the table does not have.
-- proves: the numbered seats (pack limits.seats, procedures.deals.seat_column): the seat
-- logged holding the shoe, the curator's or the Banker's, is one of the `seats` of the
-- table's options in force when the shoe opened.
-- include: held_rounds.sql
SELECT 'PRC010' AS rule, NULL::VARCHAR AS table_id, NULL::VARCHAR AS shoe_id, round_id,
       NULL::VARCHAR AS wager_id, NULL::VARCHAR AS discriminator,
       'seat 1-' || seats AS expected, seat_column || ' ' || holder_seat AS logged,
       NULL::DECIMAL(18, 2) AS impact
FROM held
WHERE holder_seat > seats
