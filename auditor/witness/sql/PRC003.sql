-- PRC003 ShoeNotPassedAfterBankerLoss: the curator or the Banker kept the shoe after the
-- Banker's Hand lost.
-- proves: the mandatory pass (pack procedures.pass_on_banker_loss): when the Banker's
-- Hand loses a regular round (the Player's final count higher) dealt by a seat, the next
-- regular round of the same shoe is dealt by another seat (or the dealer). Simulated
-- rounds neither force nor show a pass, a tie is no loss, and a new shoe starts a new
-- selection (Ambiguities 8, 9).
-- include: held_rounds.sql
, regular AS (
  SELECT *,
         CASE pass_seat_column WHEN 'curator_seat' THEN curator_seat
                               WHEN 'banker_seat' THEN banker_seat END AS passing_seat,
         point_count(player_cards) > point_count(banker_cards) AS banker_lost
  FROM held
  WHERE kind = 'regular' AND pass_seat_column IS NOT NULL
),
beside_previous AS (
  SELECT *, lag(passing_seat) OVER dealt AS previous_seat,
         lag(banker_lost) OVER dealt AS previous_banker_lost
  FROM regular
  WINDOW dealt AS (PARTITION BY shoe_id ORDER BY round_no)
)
SELECT 'PRC003' AS rule, NULL::VARCHAR AS table_id, NULL::VARCHAR AS shoe_id, round_id,
       NULL::VARCHAR AS wager_id, NULL::VARCHAR AS discriminator,
       'a seat other than ' || previous_seat AS expected, 'seat ' || passing_seat AS logged,
       NULL::DECIMAL(18, 2) AS impact
FROM beside_previous
WHERE previous_banker_lost AND previous_seat IS NOT NULL AND passing_seat = previous_seat
