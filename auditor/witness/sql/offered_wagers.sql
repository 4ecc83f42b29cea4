-- The wagers as they were taken, beside what their ruleset and the table's options in
-- force when the shoe opened allow: whether the ruleset lists the bet at all
-- (bets.permitted), whether the table has the option the bet requires, and the calls the
-- bet takes. Shared by the wager checks' witnesses (WAG001-007), which name it on a line
-- `-- include: offered_wagers.sql` where their statement's WITH clause begins.
WITH audited AS (
  SELECT w.wager_id, w.round_id, w.seat, w.bet, w."call", w.amount, w.placed_at,
         r.kind, r.no_more_bets_at, o.ruleset, o.seats, o.decks, o.ez_baccarat,
         o.house_money, o.dragon_bonus_paytable, o.royal9_paytable
  FROM wagers w JOIN rounds r ON r.round_id = w.round_id
       JOIN shoe_rules o ON o.shoe_id = r.shoe_id
  WHERE quarantine_id(w.wager_id) NOT IN (SELECT row_key FROM quarantine WHERE "table" = 'wagers')
    AND quarantine_id(r.round_id) NOT IN (SELECT row_key FROM quarantine WHERE "table" = 'rounds')
),
-- What the wager checks read of each ruleset's pack, once per ruleset rather than on
-- every wager.
terms AS (
  SELECT ruleset,
         CAST(rule_pack(ruleset)->>'$.payouts.royal9.wager.amount' AS DECIMAL(18, 2))
           AS royal9_stake,
         CAST(rule_pack(ruleset)->'$.limits.royal9.decks' AS INTEGER[]) AS royal9_decks,
         CAST(rule_pack(ruleset)->'$.limits.royal9.seats' AS INTEGER[]) AS royal9_seats,
         (rule_pack(ruleset)->>'$.procedures.no_wager_after_no_more_bets.cite') IS NOT NULL
           AND coalesce(CAST(rule_pack(ruleset)->>'$.procedures.no_wager_after_no_more_bets.value'
                             AS BOOLEAN), true) AS no_wager_after_no_more_bets
  FROM (SELECT DISTINCT ruleset FROM audited WHERE ruleset IS NOT NULL)
),
listed AS (
  SELECT ruleset, entry.bet, entry.requires,
         list_sort(list_transform(entry.calls, lambda c: c."call")) AS calls
  FROM (SELECT ruleset,
               unnest(from_json(rule_pack(ruleset)->'$.bets.permitted',
                                '[{"bet": "VARCHAR", "requires": "VARCHAR",
                                   "calls": [{"call": "VARCHAR"}]}]')) AS entry
        FROM (SELECT DISTINCT ruleset FROM audited WHERE ruleset IS NOT NULL))
),
offered AS (
  SELECT a.*, t.royal9_stake, t.royal9_decks, t.royal9_seats,
         t.no_wager_after_no_more_bets, l.bet IS NOT NULL AS in_ruleset,
         l.bet IS NOT NULL AND coalesce(CASE l.requires
           WHEN 'dragon_bonus_paytable' THEN a.dragon_bonus_paytable IS NOT NULL
           WHEN 'ez_baccarat' THEN a.ez_baccarat
           WHEN 'house_money' THEN a.house_money
           WHEN 'royal9_paytable' THEN a.royal9_paytable IS NOT NULL
           ELSE true END, false) AS permitted,
         coalesce(l.calls, []) AS calls,
         usd_text(a.amount) AS amount_text
  FROM audited a LEFT JOIN terms t ON t.ruleset = a.ruleset
       LEFT JOIN listed l ON l.ruleset = a.ruleset AND l.bet = a.bet
)
