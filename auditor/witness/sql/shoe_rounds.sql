-- Each round of the shoes in force (shoes_in_force.sql, named just before it) with the
-- cards it took from the shoe in dealing order: P1, B1, P2, B2, then the Player's third
-- card and the Banker's, then its `discarded_after` cards (a card a void round's hand
-- never got takes no place). Counting the burn card and the
-- burned cards first, `first_position` is the 0-based place in `card_sequence` of the
-- round's first card and `hands_end` the number of cards taken from the shoe through its
-- hands (its discards come after). Shared by SHO009-SHO013, which name it on a line
-- `-- include: shoe_rounds.sql` after `-- include: shoes_in_force.sql`.
, dealt AS (
  SELECT r.round_id, r.shoe_id, r.round_no, r.kind, r.cover_card_drawn,
         r.player_cards[1:1] || r.banker_cards[1:1] || r.player_cards[2:2]
           || r.banker_cards[2:2] || r.player_cards[3:] || r.banker_cards[3:] AS hand_cards,
         coalesce(r.discarded_after, []) AS discards
  FROM rounds r JOIN judged j ON j.shoe_id = r.shoe_id
  WHERE quarantine_id(r.round_id) NOT IN (SELECT row_key FROM quarantine WHERE "table" = 'rounds')
),
shoe_rounds AS (
  SELECT d.*, d.hand_cards || d.discards AS cards, j.burn_count,
         CAST(sum(len(d.hand_cards) + len(d.discards)) OVER through AS BIGINT)
           - len(d.discards) AS hands_end,
         1 + j.burn_count + CAST(sum(len(d.hand_cards) + len(d.discards)) OVER through AS BIGINT)
           - len(d.hand_cards) - len(d.discards) AS first_position
  FROM dealt d JOIN judged j ON j.shoe_id = d.shoe_id
  WINDOW through AS (PARTITION BY d.shoe_id ORDER BY d.round_no, d.round_id
                     ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
)
