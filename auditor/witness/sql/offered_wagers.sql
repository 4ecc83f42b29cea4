-- The wagers as they were taken, beside what their ruleset and the table's options in
-- force when the shoe opened allow: whether the ruleset lists the bet at all
-- (bets.permitted), whether the table has the option the bet requires, and the calls the
-- bet takes. Shared by the wager checks' witnesses (WAG001-007), which name it on a line
-- `-- include: offered_wagers.sql` where their statement's WITH clause begins.
WITH audited AS (
  SELECT w.wager_id, w.round_id, w.seat, w.bet, w."call", w.amount, w.placed_at,
         r.kind, r.no_more_bets_at, o.ruleset, o.seats, o.decks, o.ez_baccarat,
         o.house_money, o.dragon_bonus_paytable, o.royal9_paytable,
         rule_pack(o.ruleset) AS pack
  FROM wagers w JOIN rounds r ON r.round_id = w.round_id
       JOIN shoe_rules o ON o.shoe_id = r.shoe_id
  WHERE w.wager_id NOT IN (SELECT row_key FROM quarantine WHERE "table" = 'wagers')
    AND r.round_id NOT IN (SELECT row_key FROM quarantine WHERE "table" = 'rounds')
),
listed AS (
  SELECT ruleset, entry.bet, entry.requires,
         list_sort(list_transform(entry.calls, lambda c: c."call")) AS calls
  FROM (SELECT ruleset,
               unnest(from_json(rule_pack(ruleset)->'$.bets.permitted',
                                '[{"bet": "VARCHAR", "requires": "VARCHAR",
                                   "calls": [{"call": "VARCHAR"}]}]')) AS entry
        FROM (SELECT DISTINCT ruleset FROM audited))
),
offered AS (
  SELECT a.*, l.bet IS NOT NULL AS in_ruleset,
         l.bet IS NOT NULL AND coalesce(CASE l.requires
           WHEN 'dragon_bonus_paytable' THEN a.dragon_bonus_paytable IS NOT NULL
           WHEN 'ez_baccarat' THEN a.ez_baccarat
           WHEN 'house_money' THEN a.house_money
           WHEN 'royal9_paytable' THEN a.royal9_paytable IS NOT NULL
           ELSE true END, false) AS permitted,
         coalesce(l.calls, []) AS calls,
         usd_text(a.amount) AS amount_text
  FROM audited a LEFT JOIN listed l ON l.ruleset = a.ruleset AND l.bet = a.bet
)
