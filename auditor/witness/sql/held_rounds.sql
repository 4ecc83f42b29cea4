-- Each audited round of an audited shoe with the table's options in force when the shoe
-- opened, its ruleset's procedures (rule_pack's `procedures`) and the seat holding the
-- shoe where the pack names one (procedures.deals.seat_column: the curator's or the
-- Banker's). Shared by the procedure witnesses of who holds the shoe and how a shoe
-- ends (PRC001-003, PRC010-012), which name it on a line `-- include: held_rounds.sql`
-- where their statement's WITH clause begins.
WITH held AS (
  SELECT r.round_id, r.shoe_id, r.round_no, r.kind, r.cover_card_drawn, r.curator_seat,
         r.banker_seat, r.player_cards, r.banker_cards, o.ruleset, o.seats, o.free_hands,
         rule_pack(o.ruleset)->'$.procedures' AS procedures,
         rule_pack(o.ruleset)->>'$.procedures.deals.seat_column' AS seat_column,
         CASE rule_pack(o.ruleset)->>'$.procedures.deals.seat_column'
           WHEN 'curator_seat' THEN r.curator_seat WHEN 'banker_seat' THEN r.banker_seat
         END AS holder_seat
  FROM rounds r JOIN shoe_rules o ON o.shoe_id = r.shoe_id
  WHERE r.round_id NOT IN (SELECT row_key FROM quarantine WHERE "table" = 'rounds')
    AND r.shoe_id NOT IN (SELECT row_key FROM quarantine WHERE "table" = 'shoes')
    AND o.ruleset IS NOT NULL
)
