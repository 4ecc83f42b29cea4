-- PRC014 BankerWagerNotOne: a Chemin de Fer round without exactly one Banker's wager at
-- the Banker's seat.
-- proves: the Banker places a wager on the Banker's Hand (pack procedures.bank_stake;
-- the `banker` bet): each regular round of a Bank has exactly one `banker` row, at the
-- round's `banker_seat`.
-- include: bank_rounds.sql
, counted AS (
  SELECT t.round_id, t.banker_seat,
         count(w.wager_id) FILTER (WHERE w.bet = 'banker') AS banker_rows,
         count(w.wager_id) FILTER (WHERE w.bet = 'banker' AND w.seat = t.banker_seat) AS at_seat
  FROM bank_table_rounds t LEFT JOIN bank_wagers w ON w.round_id = t.round_id
  WHERE t.kind = 'regular'
  GROUP BY t.round_id, t.banker_seat
)
SELECT 'PRC014' AS rule, NULL::VARCHAR AS table_id, NULL::VARCHAR AS shoe_id, round_id,
       NULL::VARCHAR AS wager_id, NULL::VARCHAR AS discriminator,
       'one Banker wager at seat ' || banker_seat AS expected,
       banker_rows || CASE WHEN banker_rows = 1 THEN ' Banker wager' ELSE ' Banker wagers' END
         || ', ' || at_seat || ' at seat ' || banker_seat AS logged,
       NULL::DECIMAL(18, 2) AS impact
FROM counted
WHERE banker_rows <> 1 OR at_seat <> 1
