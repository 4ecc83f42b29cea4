-- The wagers settled again as the regulation and the pack say, shared by the payout and
-- commission witnesses (PAY001-006, COM001-003): each wager's due result (on the cards as
-- dealt, or each hand's first two where a Natural was given a third), due payout at the
-- pack's odds and the table's paytables, due commission (vig_rounded) and both nets.
-- A witness names it on a line of its own, `-- include: settled_wagers.sql`, where its
-- statement's WITH clause begins; the loader writes this file's statement there, so the
-- statement printed, narrowed and run is whole, runnable in `duckdb audit.duckdb` alone.
-- What the settlement reads of each ruleset's pack (its payouts, commission, EZ events,
-- naturals and the House Money rollover), taken once per ruleset: the whole pack on
-- every wager would be parsed again for every value read.
WITH packs AS (
  SELECT ruleset,
         json_object('payouts', p->'$.payouts', 'commission', p->'$.commission',
                     'ez', p->'$.ez', 'naturals', p->'$.naturals',
                     'procedures', json_object('house_money_rollover',
                                               p->'$.procedures.house_money_rollover'))
           AS pack,
         p->>'$.naturals.drawn_in_error.settle_on' AS drawn_settle_on,
         p->>'$.ez.events.dragon7.hand' AS dragon7_hand,
         CAST(p->>'$.ez.events.dragon7.total' AS INT) AS dragon7_total,
         CAST(p->>'$.ez.events.dragon7.cards' AS INT) AS dragon7_cards,
         CAST(p->>'$.ez.events.dragon7.other_hand_below' AS INT) AS dragon7_below,
         p->>'$.ez.events.panda8.hand' AS panda8_hand,
         CAST(p->>'$.ez.events.panda8.total' AS INT) AS panda8_total,
         CAST(p->>'$.ez.events.panda8.cards' AS INT) AS panda8_cards,
         CAST(p->>'$.ez.events.panda8.other_hand_below' AS INT) AS panda8_below,
         CAST(p->'$.payouts.banker.covered_by' AS VARCHAR[]) AS covered_by,
         p->>'$.payouts.banker.basis' AS banker_basis,
         p->>'$.ez.banker_push_on.event' AS banker_push_event,
         CAST(p->>'$.payouts.tie.min_odds' AS INT) AS tie_min_odds,
         p->>'$.payouts.house_money.one' AS house_money_one,
         CAST(p->'$.commission.bets.bets' AS VARCHAR[]) AS commission_bets,
         CAST(p->>'$.commission.none_at_ez.value' AS BOOLEAN) AS none_at_ez,
         CAST(p->'$.commission.percents.values' AS INT[]) AS commission_percents,
         CAST(p->'$.procedures.house_money_rollover.onto' AS VARCHAR[]) AS rollover_onto,
         CAST(p->>'$.payouts.banker.odds' AS BIGINT) AS banker_odds,
         CAST(p->>'$.payouts.player.odds' AS BIGINT) AS player_odds,
         CAST(p->>'$.payouts.dragon7.odds' AS BIGINT) AS dragon7_odds,
         CAST(p->>'$.payouts.panda8.odds' AS BIGINT) AS panda8_odds
  FROM (SELECT ruleset, rule_pack(ruleset) AS p
        FROM (SELECT DISTINCT ruleset FROM shoe_rules WHERE ruleset IS NOT NULL))
),
audited AS (
  SELECT w.wager_id, w.round_id, w.seat, w.bet, w.result, w.award,
         w.amount, w.payout, w.commission, w.amount + coalesce(w.rollover, 0) AS stake,
         w.rollover, o.house_money_rollover_percent,
         r.kind, r.player_cards, r.banker_cards, o.table_id, o.ruleset, o.ez_baccarat,
         o.tie_pays, o.commission_percent, o.commission_rounding, o.dragon_bonus_paytable,
         o.royal9_paytable, k.* EXCLUDE (ruleset),
         point_count(r.player_cards[1:2]) AS player_two,
         point_count(r.banker_cards[1:2]) AS banker_two,
         coalesce(is_natural(o.ruleset, point_count(r.player_cards[1:2])), false)
           AND len(r.player_cards) >= 2 AS player_natural,
         coalesce(is_natural(o.ruleset, point_count(r.banker_cards[1:2])), false)
           AND len(r.banker_cards) >= 2 AS banker_natural
  FROM wagers w JOIN rounds r ON r.round_id = w.round_id
       JOIN shoe_rules o ON o.shoe_id = r.shoe_id JOIN packs k ON k.ruleset = o.ruleset
  WHERE quarantine_id(w.wager_id) NOT IN (SELECT row_key FROM quarantine WHERE "table" = 'wagers')
    AND quarantine_id(r.round_id) NOT IN (SELECT row_key FROM quarantine WHERE "table" = 'rounds')
),
-- The round as it should have been dealt: where a Natural was given a third card and the
-- pack settles such a round on each hand's first two cards (naturals.drawn_in_error).
dealt AS (
  SELECT *,
         drawn_settle_on = 'first_two_cards'
           AND ((player_natural AND len(player_cards) >= 3)
                OR (banker_natural AND len(banker_cards) >= 3)) AS drawn
  FROM audited
),
hands AS (
  SELECT *,
         CASE WHEN drawn THEN player_two ELSE point_count(player_cards) END AS player_final,
         CASE WHEN drawn THEN banker_two ELSE point_count(banker_cards) END AS banker_final,
         CASE WHEN drawn THEN 2 ELSE len(player_cards) END AS player_count,
         CASE WHEN drawn THEN 2 ELSE len(banker_cards) END AS banker_count
  FROM dealt
),
-- The EZ events as each pack defines them (ez.events), the pairs of House Money.
events AS (
  SELECT *,
         coalesce(CASE dragon7_hand
           WHEN 'banker' THEN banker_final = dragon7_total
             AND banker_count = dragon7_cards
             AND player_final < dragon7_below
           WHEN 'player' THEN player_final = dragon7_total
             AND player_count = dragon7_cards
             AND banker_final < dragon7_below
           END, false) AS dragon7,
         coalesce(CASE panda8_hand
           WHEN 'banker' THEN banker_final = panda8_total
             AND banker_count = panda8_cards
             AND player_final < panda8_below
           WHEN 'player' THEN player_final = panda8_total
             AND player_count = panda8_cards
             AND banker_final < panda8_below
           END, false) AS panda8,
         coalesce(CAST(left(player_cards[1], 1) = left(player_cards[2], 1) AS INT), 0)
           + coalesce(CAST(left(banker_cards[1], 1) = left(banker_cards[2], 1) AS INT), 0)
           AS pairs,
         CASE WHEN player_final > banker_final THEN 'player'
              WHEN player_final < banker_final THEN 'banker' ELSE 'tie' END AS winner,
         CASE WHEN bet = 'dragon_bonus_banker' THEN banker_final - player_final
              ELSE player_final - banker_final END AS margin,
         CASE WHEN bet = 'dragon_bonus_banker' THEN banker_natural ELSE player_natural END
           AS own_natural,
         CASE WHEN bet = 'dragon_bonus_banker' THEN player_natural ELSE banker_natural END
           AS other_natural,
         CASE WHEN bet IN ('dragon_bonus_banker', 'dragon_bonus_player')
              THEN pack->'$.payouts.dragon_bonus'->dragon_bonus_paytable END AS dragon_table
  FROM hands
),
-- Royal 9 (payouts.royal9): each hand's first two cards as a combination, face card
-- first, the seats posting it (royal9_seats where the table has rows, else the pack's
-- chairs), the first line of the table's paytable the wager meets.
royal AS (
  SELECT *,
         CASE WHEN left(c2, 1) = '9' AND left(c1, 1) IN ('J', 'Q', 'K') THEN c1 || c2
              WHEN left(c1, 1) = '9' AND left(c2, 1) IN ('J', 'Q', 'K') THEN c2 || c1 END
           AS combo
  FROM (SELECT e.wager_id, h.hand, h.cards[1] AS c1, h.cards[2] AS c2
        FROM events e,
             (VALUES ('player'), ('banker')) AS hh(hand),
             LATERAL (SELECT hh.hand,
                             CASE hh.hand WHEN 'player' THEN e.player_cards
                                          ELSE e.banker_cards END AS cards) AS h
        WHERE e.bet = 'royal9')
),
posted AS (
  SELECT ro.wager_id, ro.hand, ro.combo, substr(ro.c2, 2, 1) = substr(ro.c1, 2, 1)
           AND ro.combo IS NOT NULL AS suited,
         CASE WHEN EXISTS (SELECT 1 FROM royal9_seats s WHERE s.table_id = e.table_id)
              THEN (SELECT list(DISTINCT CAST(s.seat AS INT)) FROM royal9_seats s
                    WHERE s.table_id = e.table_id AND s.combo = ro.combo)
              ELSE (SELECT list(CAST(k AS INT)) FROM
                      (SELECT unnest(json_keys(e.pack->'$.payouts.royal9.seat_combinations.chairs')) AS k)
                    WHERE list_contains(CAST(e.pack->'$.payouts.royal9.seat_combinations.chairs'->k
                                             AS VARCHAR[]), ro.combo))
         END AS seats, e.seat
  FROM royal ro JOIN events e USING (wager_id)
),
qualified AS (
  SELECT p.wager_id,
         p.combo AS p_combo, b.combo AS b_combo, p.suited AS p_suited, b.suited AS b_suited,
         coalesce(list_contains(p.seats, CAST(p.seat AS INT)), false) AS p_mine,
         coalesce(list_contains(b.seats, CAST(b.seat AS INT)), false) AS b_mine,
         coalesce(len(p.seats), 0) > CAST(coalesce(list_contains(p.seats, CAST(p.seat AS INT)), false) AS INT) AS p_other
  FROM posted p JOIN posted b ON b.wager_id = p.wager_id AND p.hand = 'player' AND b.hand = 'banker'
),
lines AS (
  SELECT e.wager_id, i AS line_no,
         e.pack->'$.payouts.royal9.paytables'->e.royal9_paytable->'lines'->(i) AS line
  FROM events e, range(0, 32) AS t(i)
  WHERE e.bet = 'royal9'
    AND i < json_array_length(e.pack->'$.payouts.royal9.paytables'->e.royal9_paytable->'lines')
),
-- Whether the wager meets each line of its paytable, the lines in the pack's order.
met AS (
  SELECT q.wager_id, l.line_no, l.line->>'name' AS name, l.line->>'pays' AS pays,
         CASE l.line->>'match'
           WHEN 'personal_both_same' THEN coalesce(q.p_combo = q.b_combo, false) AND q.p_mine
           WHEN 'personal_both_different' THEN q.p_mine AND q.b_mine
             AND NOT coalesce(q.p_combo = q.b_combo, false)
           WHEN 'personal_banker' THEN q.b_mine
           WHEN 'personal_player' THEN q.p_mine
           WHEN 'other_seat_both_same' THEN coalesce(q.p_combo = q.b_combo, false) AND q.p_other
           WHEN 'suited_royal9_both' THEN q.p_suited AND q.b_suited
           WHEN 'royal9_both' THEN q.p_combo IS NOT NULL AND q.b_combo IS NOT NULL
           WHEN 'suited_royal9_any' THEN q.p_suited OR q.b_suited
           WHEN 'royal9_any' THEN q.p_combo IS NOT NULL OR q.b_combo IS NOT NULL
         END AS meets
  FROM qualified q LEFT JOIN lines l USING (wager_id)
),
-- The first line met pays.
royal9 AS (
  SELECT wager_id, arg_min(name, line_no) FILTER (WHERE meets) AS line,
         arg_min(pays, line_no) FILTER (WHERE meets) AS pays
  FROM met
  GROUP BY wager_id
),
-- What a Chemin de Fer Bank can win or lose (payouts.banker.basis covered): the stakes
-- of the round's wagers against it, the bets its pack lists under covered_by.
against AS (
  SELECT round_id, sum(stake) AS covered
  FROM audited
  WHERE list_contains(covered_by, bet)
  GROUP BY round_id
),
judged AS (
  SELECT e.*, y.line AS royal9_line, y.pays AS royal9_pays,
         e.bet = 'royal9' AND coalesce(json_type(e.pack->'$.payouts.royal9.paytables'
                                                 ->e.royal9_paytable) = 'OBJECT', false)
           AS royal9_known,
         e.bet = 'royal9' AND coalesce(CAST(e.pack->'$.payouts.royal9.paytables'
                                            ->e.royal9_paytable->>'$.random_award.value'
                                            AS BOOLEAN), false) AS royal9_random,
         CASE WHEN e.bet = 'banker' AND banker_basis = 'covered'
              THEN least(e.stake, coalesce(a.covered, 0)) ELSE e.stake END AS basis,
         e.ez_baccarat AND CASE banker_push_event
                             WHEN 'dragon7' THEN e.dragon7 WHEN 'panda8' THEN e.panda8
                             ELSE false END AS ez_push
  FROM events e LEFT JOIN royal9 y USING (wager_id) LEFT JOIN against a USING (round_id)
),
due AS (
  SELECT *,
         CASE WHEN kind = 'void' THEN 'push'
              WHEN bet = 'banker' THEN CASE WHEN winner = 'tie' OR ez_push THEN 'push'
                                            WHEN winner = 'banker' THEN 'win' ELSE 'lose' END
              WHEN bet = 'player' THEN CASE WHEN winner = 'tie' THEN 'push'
                                            WHEN winner = 'player' THEN 'win' ELSE 'lose' END
              WHEN bet = 'tie' THEN CASE WHEN tie_min_odds IS NOT NULL THEN
                                      CASE WHEN winner = 'tie' THEN 'win' ELSE 'lose' END END
              WHEN bet IN ('dragon_bonus_banker', 'dragon_bonus_player') THEN
                CASE WHEN json_type(dragon_table) = 'OBJECT' THEN
                  CASE WHEN own_natural AND other_natural AND margin = 0
                         THEN dragon_table->>'natural_tie'
                       WHEN own_natural AND other_natural AND margin < 0 THEN 'lose'
                       WHEN own_natural THEN 'win'
                       WHEN other_natural THEN 'lose'
                       WHEN (dragon_table->'win_by'->>CAST(margin AS VARCHAR)) IS NOT NULL
                         THEN 'win'
                       ELSE 'lose' END END
              WHEN bet IN ('dragon7', 'panda8') THEN
                CASE WHEN CASE bet WHEN 'dragon7' THEN dragon7_odds
                               WHEN 'panda8' THEN panda8_odds END IS NOT NULL THEN
                  CASE WHEN (bet = 'dragon7' AND dragon7) OR (bet = 'panda8' AND panda8)
                       THEN 'win' ELSE 'lose' END END
              WHEN bet = 'house_money' THEN
                CASE WHEN house_money_one IS NOT NULL THEN
                  CASE WHEN pairs > 0 THEN 'win' ELSE 'lose' END END
              WHEN bet = 'royal9' THEN
                CASE WHEN royal9_known THEN
                  CASE WHEN royal9_line IS NOT NULL THEN 'win' ELSE 'lose' END END
         END AS due_result,
         CASE WHEN bet = 'tie' THEN CAST(tie_pays AS BIGINT)
              WHEN bet IN ('dragon_bonus_banker', 'dragon_bonus_player') THEN
                CAST(CASE WHEN own_natural THEN dragon_table->>'natural_winner'
                          ELSE dragon_table->'win_by'->>CAST(margin AS VARCHAR) END AS BIGINT)
              WHEN bet = 'house_money' THEN
                CAST(pack->'$.payouts.house_money'->>(CASE WHEN pairs >= 2 THEN 'both'
                                                          ELSE 'one' END) AS BIGINT)
              ELSE CASE bet WHEN 'banker' THEN banker_odds WHEN 'player' THEN player_odds
                            WHEN 'dragon7' THEN dragon7_odds WHEN 'panda8' THEN panda8_odds
                   END END AS odds
  FROM judged
),
paid AS (
  SELECT *,
         CASE WHEN due_result IS NULL THEN NULL
              WHEN due_result <> 'win' THEN 0
              WHEN bet = 'royal9' THEN TRY_CAST(royal9_pays AS DECIMAL(18, 2))
              WHEN bet = 'banker' THEN odds * basis
              ELSE odds * stake END::DECIMAL(18, 2) AS due_payout
  FROM due
),
charged AS (
  SELECT *,
         CASE WHEN list_contains(commission_bets, bet)
                   AND due_result = 'win'
                   AND NOT (ez_baccarat AND coalesce(none_at_ez, false))
              THEN vig_rounded(percent, CAST(round(due_payout * 100) AS BIGINT),
                               commission_rounding, vig_step(ruleset, percent))
              WHEN due_result IS NOT NULL THEN 0 END::DECIMAL(18, 2) AS due_commission
  FROM (SELECT *,
               greatest(least(CAST(commission_percent AS INT),
                              list_max(commission_percents)),
                        list_min(commission_percents)) AS percent
        FROM paid)
),
settled AS (
  SELECT *,
         CASE WHEN result = 'lose' THEN -basis ELSE 0 END + payout - commission AS logged_net,
         CASE WHEN due_result = 'lose' THEN -basis ELSE 0 END + due_payout - due_commission
           AS due_net
  FROM charged
)
