-- Each shoe the audit read, beside the table's options in force when it opened, its
-- ruleset's pack, the decks a shoe may hold there and the shoe dealt before it at the
-- table. Shared by the shoe witnesses (SHO001-008), which name it on a line
-- `-- include: shoes_in_force.sql` where their statement's WITH clause begins.
-- With an automated shuffler whose two batches must be equal (limits.automated_shuffler
-- two_batches and equal_batches), each shoe is half of the permitted total: (total
-- minimum + 1) // 2 to total maximum // 2 decks (INDEX Ambiguity 16).
WITH audited AS (
  SELECT s.shoe_id, s.table_id, s.opened_at, s.decks, s.card_sequence, s.cut_index,
         -- The sequence's length as a number: a join of the shoe to each of its rounds
         -- or cards carries a number rather than a copy of the whole list.
         len(s.card_sequence) AS sequence_length,
         s.cover_from_back, s.burn_card, s.burn_count, o.ruleset, o.decks AS table_decks,
         o.automated_shuffler, o.royal9_paytable, rule_pack(o.ruleset) AS pack
  FROM shoes s JOIN shoe_rules o ON o.shoe_id = s.shoe_id
  WHERE quarantine_id(s.shoe_id) NOT IN (SELECT row_key FROM quarantine WHERE "table" = 'shoes')
    AND o.ruleset IS NOT NULL
),
batched AS (
  SELECT *,
         coalesce(automated_shuffler, false)
           AND CAST(pack->>'$.limits.automated_shuffler.two_batches' AS BOOLEAN)
           AND CAST(pack->>'$.limits.automated_shuffler.equal_batches' AS BOOLEAN) AS halves
  FROM audited
),
in_force AS (
  SELECT *,
         CASE WHEN halves AND (pack->>'$.limits.automated_shuffler.total_decks.cite') IS NOT NULL
              THEN (CAST(pack->>'$.limits.automated_shuffler.total_decks.min' AS INT) + 1) // 2
              ELSE CAST(pack->>'$.limits.decks.min' AS INT) END AS fewest_decks,
         CASE WHEN halves AND (pack->>'$.limits.automated_shuffler.total_decks.cite') IS NOT NULL
              THEN CAST(pack->>'$.limits.automated_shuffler.total_decks.max' AS INT) // 2
              ELSE CAST(pack->>'$.limits.decks.max' AS INT) END AS most_decks,
         CAST(pack->'$.limits.royal9.decks' AS INTEGER[]) AS royal9_decks,
         lag(shoe_id) OVER dealt AS previous_shoe_id,
         lag(decks) OVER dealt AS previous_decks,
         lag(table_decks) OVER dealt AS previous_table_decks,
         lag(automated_shuffler) OVER dealt AS previous_automated_shuffler
  FROM batched
  WINDOW dealt AS (PARTITION BY table_id ORDER BY opened_at, shoe_id)
),
judged AS (
  SELECT *,
         (fewest_decks IS NULL OR decks >= fewest_decks)
           AND (most_decks IS NULL OR decks <= most_decks) AS decks_permitted,
         royal9_paytable IS NULL OR royal9_decks IS NULL
           OR list_contains(royal9_decks, decks) AS royal9_decks_ok,
         CASE WHEN fewest_decks = most_decks THEN fewest_decks || ' decks'
              WHEN fewest_decks IS NOT NULL AND most_decks IS NOT NULL
                THEN fewest_decks || ' to ' || most_decks || ' decks'
              WHEN fewest_decks IS NOT NULL THEN 'at least ' || fewest_decks || ' decks'
              ELSE 'at most ' || most_decks || ' decks' END AS permitted_words
  FROM in_force
)
