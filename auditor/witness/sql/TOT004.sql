-- TOT004 WrongEzAnnouncement: an EZ event missing, wrong or announced where none applies.
-- proves: the EZ announcements (pack rule ez.announce): at an EZ table (ez_baccarat) the
-- events the pack announces are announced exactly when the cards make them, each as the
-- pack defines it (ez.events: the hand, its final count and number of cards, the other
-- hand's count below a bound); elsewhere, and in a void round, none is announced.
WITH audited AS (
  SELECT r.round_id, r.kind, r.ez_event, o.ez_baccarat, rule_pack(o.ruleset)->'$.ez' AS ez,
         point_count(r.player_cards) AS player_final, len(r.player_cards) AS player_count,
         point_count(r.banker_cards) AS banker_final, len(r.banker_cards) AS banker_count
  FROM rounds r JOIN shoe_rules o ON o.shoe_id = r.shoe_id
  WHERE quarantine_id(r.round_id) NOT IN (SELECT row_key FROM quarantine WHERE "table" = 'rounds')
),
events AS (
  SELECT a.*, e.name,
         e.name IN (SELECT unnest(CAST(json_extract_string(ez, '$.announce[*].event')
                                       AS VARCHAR[]))) AS announced,
         CAST(ez->'$.events'->e.name->>'hand' AS VARCHAR) AS hand,
         CAST(ez->'$.events'->e.name->>'total' AS INTEGER) AS total,
         CAST(ez->'$.events'->e.name->>'cards' AS INTEGER) AS event_cards,
         CAST(ez->'$.events'->e.name->>'other_hand_below' AS INTEGER) AS below
  FROM audited a, (VALUES ('dragon7'), ('panda8')) AS e(name)
),
expected AS (
  SELECT round_id, kind, ez_event,
         max(CASE WHEN kind <> 'void' AND ez_baccarat AND announced AND hand IS NOT NULL
                   AND CASE hand WHEN 'player' THEN player_final = total
                                           AND player_count = event_cards
                                           AND banker_final < below
                                 WHEN 'banker' THEN banker_final = total
                                           AND banker_count = event_cards
                                           AND player_final < below END
                  THEN name END) AS event
  FROM events GROUP BY round_id, kind, ez_event
)
SELECT 'TOT004' AS rule, NULL::VARCHAR AS table_id, NULL::VARCHAR AS shoe_id, round_id,
       NULL::VARCHAR AS wager_id, NULL::VARCHAR AS discriminator,
       coalesce(event, 'none') AS expected, coalesce(ez_event, 'none') AS logged,
       NULL::DECIMAL(18, 2) AS impact
FROM expected
WHERE event IS DISTINCT FROM ez_event
