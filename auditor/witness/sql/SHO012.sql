-- SHO012 CoverCardFlagInconsistent: cover_card_drawn first set on another round than the
-- one whose hands reach the cover card in the card sequence.
-- proves: the last-hand rule (pack procedures.last_hand_after_cover): the cover card,
-- `cover_from_back` cards from the back of the sequence, appears in the first round whose
-- hands take the card in front of it; that round is the first logged with
-- `cover_card_drawn`. Reported on the earlier of the two rounds. The flag is judged
-- wherever the pack cites the rule, also where it allows any number of hands after the
-- cover card (Chemin de Fer, Ambiguity 5): the flag still says where the card lay.
-- include: shoes_in_force.sql
-- include: shoe_rounds.sql
, flagged AS (
  SELECT j.shoe_id,
         min(r.round_no) FILTER (WHERE r.hands_end
                                   > j.sequence_length - j.cover_from_back - 1
                                     - j.burn_count) AS expected_no,
         min(r.round_no) FILTER (WHERE r.cover_card_drawn) AS logged_no
  FROM judged j JOIN shoe_rounds r ON r.shoe_id = j.shoe_id
  WHERE j.sequence_length IS NOT NULL AND j.cover_from_back IS NOT NULL
    AND (j.pack->>'$.procedures.last_hand_after_cover.cite') IS NOT NULL
  GROUP BY j.shoe_id
)
SELECT 'SHO012' AS rule, NULL::VARCHAR AS table_id, NULL::VARCHAR AS shoe_id, r.round_id,
       NULL::VARCHAR AS wager_id, NULL::VARCHAR AS discriminator,
       coalesce('round ' || f.expected_no, 'never set') AS expected,
       coalesce('round ' || f.logged_no, 'never set') AS logged,
       NULL::DECIMAL(18, 2) AS impact
FROM flagged f JOIN shoe_rounds r
  ON r.shoe_id = f.shoe_id AND r.round_no = least(f.expected_no, f.logged_no)
WHERE f.expected_no IS DISTINCT FROM f.logged_no
