-- TBL004 Royal9ChairCombinationsNotAllowed: the Personal King-9 combinations posted at a
-- Royal 9 table's chairs break the ruleset's rules for them.
-- proves: the Personal King-9 combinations (pack payouts.royal9.seat_combinations): at a
-- table offering Royal 9, no combination is posted at two chairs (`unique`), no chair
-- posts more than `per_seat` combinations, and where the ruleset wants them non-suited
-- (`suited` false) the face card and the nine differ in suit. One finding per
-- combination or chair at fault, on the table. The chairs are the table's, not a tables
-- row's: under each ruleset the table offers Royal 9 under, a fault reported once, under
-- the ruleset it offered Royal 9 under first.
-- include: submitted_tables.sql
, offering AS (
  SELECT table_id, ruleset, min(effective_from) AS offered_from
  FROM submitted WHERE royal9_paytable IS NOT NULL
  GROUP BY table_id, ruleset
), posted AS (
  SELECT s.table_id, s.seat, s.combo, o.ruleset, o.offered_from,
         rule_pack(o.ruleset)->'$.payouts.royal9.seat_combinations' AS rules
  FROM royal9_seats s JOIN offering o ON o.table_id = s.table_id
  WHERE quarantine_id(s.table_id) || '/' || s.seat || '/' || quarantine_id(s.combo)
        NOT IN (SELECT row_key FROM quarantine WHERE "table" = 'royal9_seats')
    AND (rule_pack(o.ruleset)->>'$.payouts.royal9.seat_combinations.cite') IS NOT NULL
), at_two_chairs AS (
  SELECT table_id, offered_from, ruleset, combo || ' posted at chairs '
           || array_to_string(list_sort(list_distinct(list(seat))), ', ') AS problem,
         'each combination at one chair' AS expected, 'combination=' || combo AS discriminator
  FROM posted WHERE CAST(rules->>'$.unique' AS BOOLEAN)
  GROUP BY table_id, offered_from, ruleset, combo HAVING count(DISTINCT seat) > 1
), crowded AS (
  SELECT table_id, offered_from, ruleset, count(DISTINCT combo) || ' combinations at chair '
           || seat || ': ' || array_to_string(list_sort(list_distinct(list(combo))), ', ')
           AS problem,
         'at most ' || any_value(rules->>'$.per_seat') || ' per chair' AS expected,
         'chair=' || seat AS discriminator
  FROM posted WHERE (rules->>'$.per_seat') IS NOT NULL
  GROUP BY table_id, offered_from, ruleset, seat
  HAVING count(DISTINCT combo) > CAST(any_value(rules->>'$.per_seat') AS INTEGER)
), suited AS (
  SELECT table_id, offered_from, ruleset, 'suited ' || combo || ' at chair ' || seat AS problem,
         'a face card and a nine of different suits' AS expected,
         'chair=' || seat || ';combination=' || combo AS discriminator
  FROM posted
  WHERE NOT CAST(rules->>'$.suited' AS BOOLEAN) AND combo[2] = combo[4]
)
SELECT 'TBL004' AS rule, table_id, NULL::VARCHAR AS shoe_id, NULL::VARCHAR AS round_id,
       NULL::VARCHAR AS wager_id, discriminator, expected, problem AS logged,
       NULL::DECIMAL(18, 2) AS impact
FROM (SELECT * FROM at_two_chairs UNION ALL SELECT * FROM crowded
      UNION ALL SELECT * FROM suited)
QUALIFY row_number() OVER (PARTITION BY table_id, discriminator
                           ORDER BY offered_from, ruleset) = 1
