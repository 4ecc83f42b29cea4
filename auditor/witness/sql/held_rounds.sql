-- Each audited round of an audited shoe with the table's options in force when the shoe
-- opened, what its ruleset's procedures say (read from rule_pack once per ruleset, not on
-- every round) and the seat holding the shoe where the pack names one
-- (procedures.deals.seat_column: the curator's or the Banker's). A rule a pack states but
-- switches off (`value` false) is not in force. Shared by the procedure witnesses of who
-- holds the shoe and how a shoe ends (PRC001-003, PRC010-012), which name it on a line
-- `-- include: held_rounds.sql` where their statement's WITH clause begins.
WITH terms AS (
  SELECT ruleset,
         p->>'$.deals.seat_column' AS seat_column,
         p->>'$.pass_on_banker_loss.seat_column' AS pass_seat_column,
         (p->>'$.last_hand_after_cover.cite') IS NOT NULL
           AND coalesce(CAST(p->>'$.last_hand_after_cover.value' AS BOOLEAN), true)
           AS last_hand_rule,
         CAST(p->>'$.last_hand_after_cover.hands_after' AS INTEGER) AS hands_after,
         CAST(p->'$.last_hand_after_cover.counted_kinds' AS VARCHAR[]) AS counted_kinds,
         (p->>'$.void_ends_shoe.cite') IS NOT NULL
           AND coalesce(CAST(p->>'$.void_ends_shoe.value' AS BOOLEAN), true) AS void_ends_shoe,
         (p->>'$.free_hands.cite') IS NOT NULL
           AND coalesce(CAST(p->>'$.free_hands.value' AS BOOLEAN), true) AS free_hands_rule
  FROM (SELECT ruleset, rule_pack(ruleset)->'$.procedures' AS p
        FROM (SELECT DISTINCT ruleset FROM shoe_rules WHERE ruleset IS NOT NULL))
),
held AS (
  SELECT r.round_id, r.shoe_id, r.round_no, r.kind, r.cover_card_drawn, r.curator_seat,
         r.banker_seat, r.player_cards, r.banker_cards, o.ruleset, o.seats, o.free_hands,
         t.seat_column, t.pass_seat_column, t.last_hand_rule, t.hands_after,
         t.counted_kinds, t.void_ends_shoe, t.free_hands_rule,
         CASE t.seat_column WHEN 'curator_seat' THEN r.curator_seat
                            WHEN 'banker_seat' THEN r.banker_seat END AS holder_seat
  FROM rounds r JOIN shoe_rules o ON o.shoe_id = r.shoe_id
       JOIN terms t ON t.ruleset = o.ruleset
  WHERE quarantine_id(r.round_id) NOT IN (SELECT row_key FROM quarantine WHERE "table" = 'rounds')
    AND quarantine_id(r.shoe_id) NOT IN (SELECT row_key FROM quarantine WHERE "table" = 'shoes')
)
