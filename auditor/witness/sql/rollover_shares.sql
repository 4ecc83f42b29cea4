-- The House Money rollovers beside each seat's authorised share, shared by the rollover
-- witnesses (WAG008-010), which name it on a line `-- include: rollover_shares.sql` right
-- after `-- include: settled_wagers.sql` (the House Money wager's payout due by the
-- cards). Per seat of a round: the share, floor of
-- each winning House Money payout x the table's `house_money_rollover_percent` / 100 to
-- the cent, summed (INDEX Ambiguity 20); whether any House Money wager there won; and
-- the rollover the seat's wagers of the pack's rollover bets (procedures.
-- house_money_rollover.onto) carry. A rollover on any other wager stays out of the seat's
-- total (Ambiguity 29).
, rolled AS (
  SELECT *,
         coalesce(list_contains(rollover_onto, bet), false) AS onto_target,
         bet = 'house_money' AND due_result = 'win' AS house_money_won,
         CAST(round(rollover * 100) AS BIGINT) AS rollover_cents
  FROM settled
),
seats AS (
  SELECT *,
         coalesce(sum(CASE WHEN house_money_won
                           THEN CAST(round(due_payout * 100) AS BIGINT)
                                * house_money_rollover_percent // 100
                           ELSE 0 END) OVER seat, 0) AS share_cents,
         coalesce(bool_or(house_money_won) OVER seat, false) AS seat_won,
         coalesce(sum(CASE WHEN onto_target THEN rollover_cents ELSE 0 END) OVER seat, 0)
           AS seat_rollover_cents
  FROM rolled
  WINDOW seat AS (PARTITION BY round_id, seat)
),
rollovers AS (
  SELECT *, NOT onto_target OR NOT seat_won OR share_cents = 0 AS unauthorised
  FROM seats
  WHERE rollover_cents > 0
)
