-- SHO006 BurnCardNotFirstInSequence: a card-reading shoe whose first card is not the
-- logged burn card.
-- proves: the burn (pack procedures.burn): the first card out of the shoe is exposed and
-- burned, so a card sequence starts with `burn_card`.
-- include: shoes_in_force.sql
SELECT 'SHO006' AS rule, NULL::VARCHAR AS table_id, shoe_id, NULL::VARCHAR AS round_id,
       NULL::VARCHAR AS wager_id, NULL::VARCHAR AS discriminator, burn_card AS expected,
       coalesce(card_sequence[1], 'no card') AS logged, NULL::DECIMAL(18, 2) AS impact
FROM judged
WHERE card_sequence IS NOT NULL
  AND (pack->>'$.procedures.burn.cite') IS NOT NULL
  AND coalesce(CAST(pack->>'$.procedures.burn.value' AS BOOLEAN), true)
  AND card_sequence[1] IS DISTINCT FROM burn_card
