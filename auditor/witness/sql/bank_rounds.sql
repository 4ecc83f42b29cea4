-- The Chemin de Fer Banks, round by round: every audited round of an audited shoe whose
-- pack states the Bank's stake rule (procedures.bank_stake), its wagers on the Banker and
-- against him, and the Bank's state read in dealing order. A Bank begins with each shoe
-- (each is auctioned: Ambiguity 8), where `banker_bid` is logged, or where the Banker's
-- seat changes from the previous round with a Banker's wager. The Banker's wager is the
-- `banker` row at `banker_seat` (the first by id where there are several). Its preceding
-- wager is the Bank's previous round's, tied rounds counted where the pack says so
-- (tied_rounds_count; Ambiguity 2). Suivi belongs to the seat whose banco or suivi
-- (suivi.qualifying_calls), equal to the Bank, lost the Bank's last decided round
-- (skip_ties), a new Bank resetting it where the pack says so (Ambiguity 3). Shared by
-- PRC004-PRC008 and PRC013-PRC015, which name it on a line `-- include: bank_rounds.sql`
-- where their statement's WITH clause begins.
WITH terms AS (
  SELECT ruleset,
         coalesce(CAST(p->>'$.bank_stake.first_at_least_bid' AS BOOLEAN), false)
           AS first_at_least_bid,
         CAST(p->>'$.bank_stake.min_multiple' AS BIGINT) AS min_multiple,
         CAST(p->>'$.bank_stake.max_multiple' AS BIGINT) AS max_multiple,
         coalesce(CAST(p->>'$.bank_stake.tied_rounds_count' AS BOOLEAN), false)
           AS tied_rounds_count,
         coalesce(CAST(p->>'$.wagers_against_bank.each_at_most_bank' AS BOOLEAN), false)
           AS each_at_most_bank,
         coalesce(CAST(p->>'$.wagers_against_bank.total_at_most_bank' AS BOOLEAN), false)
           AS total_at_most_bank,
         (p->>'$.suivi.cite') IS NOT NULL AS suivi_rule,
         CAST(p->'$.suivi.qualifying_calls' AS VARCHAR[]) AS suivi_calls,
         coalesce(CAST(p->>'$.suivi.skip_ties' AS BOOLEAN), true) AS suivi_skips_ties,
         coalesce(CAST(p->>'$.suivi.new_bank_resets' AS BOOLEAN), false) AS new_bank_resets,
         (p->>'$.bank_bid_logged.cite') IS NOT NULL
           AND coalesce(CAST(p->>'$.bank_bid_logged.value' AS BOOLEAN), true) AS bid_logged_rule
  FROM (SELECT ruleset, rule_pack(ruleset)->'$.procedures' AS p
        FROM (SELECT DISTINCT ruleset FROM shoe_rules WHERE ruleset IS NOT NULL))
  WHERE (p->>'$.bank_stake.cite') IS NOT NULL
),
bank_table_rounds AS (
  SELECT r.round_id, r.shoe_id, r.round_no, r.kind, r.banker_seat,
         CAST(round(r.banker_bid * 100) AS BIGINT) AS bid_cents, t.*,
         CASE WHEN point_count(r.player_cards) > point_count(r.banker_cards) THEN 'player'
              WHEN point_count(r.player_cards) < point_count(r.banker_cards) THEN 'banker'
              ELSE 'tie' END AS outcome
  FROM rounds r JOIN shoe_rules o ON o.shoe_id = r.shoe_id
       JOIN terms t ON t.ruleset = o.ruleset
  WHERE quarantine_id(r.round_id) NOT IN (SELECT row_key FROM quarantine WHERE "table" = 'rounds')
    AND quarantine_id(r.shoe_id) NOT IN (SELECT row_key FROM quarantine WHERE "table" = 'shoes')
),
bank_wagers AS (
  SELECT w.wager_id, w.round_id, w.seat, w.bet, w."call",
         CAST(round(w.amount * 100) AS BIGINT) AS amount_cents, t.banker_seat, t.ruleset,
         t.suivi_calls
  FROM wagers w JOIN bank_table_rounds t ON t.round_id = w.round_id
  WHERE quarantine_id(w.wager_id) NOT IN (SELECT row_key FROM quarantine WHERE "table" = 'wagers')
    AND w.bet IN ('banker', 'player')
),
bankers AS (
  SELECT round_id, min(wager_id) AS bank_wager_id, arg_min(amount_cents, wager_id) AS bank_cents
  FROM bank_wagers WHERE bet = 'banker' AND seat = banker_seat
  GROUP BY round_id
),
against AS (
  SELECT round_id, sum(amount_cents) AS against_total, max(amount_cents) AS against_max,
         count(*) AS against_count
  FROM bank_wagers WHERE bet = 'player'
  GROUP BY round_id
),
full_calls AS (
  SELECT w.round_id, min(w.seat) AS full_seat
  FROM bank_wagers w JOIN bankers b ON b.round_id = w.round_id
  WHERE w.bet = 'player' AND w.amount_cents = b.bank_cents
    AND list_contains(w.suivi_calls, w."call")
  GROUP BY w.round_id
),
bank_rounds AS (
  SELECT t.*, b.bank_wager_id, b.bank_cents, a.against_total, a.against_max,
         a.against_count, f.full_seat,
         coalesce(lag(t.banker_seat) OVER dealt IS DISTINCT FROM t.banker_seat
                  OR t.bid_cents IS NOT NULL
                  OR row_number() OVER dealt = 1, true) AS bank_start
  FROM bank_table_rounds t JOIN bankers b ON b.round_id = t.round_id
       LEFT JOIN against a ON a.round_id = t.round_id
       LEFT JOIN full_calls f ON f.round_id = t.round_id
  WINDOW dealt AS (PARTITION BY t.shoe_id ORDER BY t.round_no)
),
marked AS (
  SELECT *,
         -- -1 marks "nobody" (a Bank's or a shoe's start) apart from "nothing new".
         CASE WHEN bank_start THEN -1
              ELSE lag(CASE WHEN tied_rounds_count OR outcome <> 'tie'
                            THEN bank_cents END) OVER dealt
         END AS preceding_mark,
         CASE WHEN row_number() OVER dealt = 1
                   OR (bank_start AND new_bank_resets)
              THEN -1
              ELSE lag(CASE WHEN kind = 'regular' AND (NOT suivi_skips_ties OR outcome <> 'tie')
                            THEN CASE WHEN outcome = 'banker' THEN coalesce(full_seat, -1)
                                      ELSE -1 END END) OVER dealt
         END AS entitled_mark
  FROM bank_rounds
  WINDOW dealt AS (PARTITION BY shoe_id ORDER BY round_no)
),
bank_state AS (
  SELECT *,
         nullif(last_value(preceding_mark IGNORE NULLS) OVER upto, -1) AS preceding_cents,
         nullif(last_value(entitled_mark IGNORE NULLS) OVER upto, -1) AS entitled_seat
  FROM marked
  WINDOW upto AS (PARTITION BY shoe_id ORDER BY round_no
                  ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
)
