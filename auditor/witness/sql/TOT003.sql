-- TOT003 WrongOutcome: the winner announced wrongly.
-- proves: the announcement of the winner (pack rule announce.outcome): the higher final
-- count wins, equal counts tie; a void round has no winner (`void`); and where the pack
-- voids a round only for want of cards (procedures.void_ends_shoe), a round logged void
-- whose hands hold every card the rules deal them was played out, and has its winner.
WITH audited AS (
  SELECT r.round_id, r.kind, r.outcome, r.player_cards, r.banker_cards, o.ruleset,
         point_count(r.player_cards) AS player_final,
         point_count(r.banker_cards) AS banker_final,
         point_count(r.player_cards[1:2]) AS player_two,
         point_count(r.banker_cards[1:2]) AS banker_two,
         CASE WHEN len(r.player_cards) >= 3 THEN card_value(r.player_cards[3]) END
           AS player_third
  FROM rounds r JOIN shoe_rules o ON o.shoe_id = r.shoe_id
  WHERE quarantine_id(r.round_id) NOT IN (SELECT row_key FROM quarantine WHERE "table" = 'rounds')
),
judged AS (
  SELECT *,
         CASE WHEN player_final > banker_final THEN 'player'
              WHEN player_final < banker_final THEN 'banker' ELSE 'tie' END AS by_cards,
         len(player_cards) >= 2 AND len(banker_cards) >= 2
           AND (is_natural(ruleset, player_two) OR is_natural(ruleset, banker_two)
                OR ((len(player_cards) >= 3 OR player_draws(ruleset, player_two) IS NOT TRUE)
                    AND (len(banker_cards) >= 3
                         OR NOT banker_draws(ruleset, banker_two, player_third))))
           AS played_out
  FROM audited
)
SELECT 'TOT003' AS rule, NULL::VARCHAR AS table_id, NULL::VARCHAR AS shoe_id, round_id,
       NULL::VARCHAR AS wager_id, NULL::VARCHAR AS discriminator,
       CASE WHEN kind = 'void' AND outcome <> 'void' THEN 'void' ELSE by_cards END
         AS expected,
       outcome AS logged, NULL::DECIMAL(18, 2) AS impact
FROM judged
WHERE (kind <> 'void' AND outcome <> by_cards)
   OR (kind = 'void' AND outcome <> 'void')
   OR (kind = 'void' AND played_out
       AND CAST(rule_pack(ruleset)->>'$.procedures.void_ends_shoe.value' AS BOOLEAN))
