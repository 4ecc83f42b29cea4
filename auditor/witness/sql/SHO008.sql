-- SHO008 CoverCardTooClose: a cover card placed too close to the back of the shoe.
-- proves: the cover card (pack limits.cover_card.min_from_back): where the ruleset
-- places it, at least that many cards lie behind it.
-- include: shoes_in_force.sql
SELECT 'SHO008' AS rule, NULL::VARCHAR AS table_id, shoe_id, NULL::VARCHAR AS round_id,
       NULL::VARCHAR AS wager_id, NULL::VARCHAR AS discriminator,
       'at least ' || (pack->>'$.limits.cover_card.min_from_back') AS expected,
       CAST(cover_from_back AS VARCHAR) AS logged, NULL::DECIMAL(18, 2) AS impact
FROM judged
WHERE cover_from_back < CAST(pack->>'$.limits.cover_card.min_from_back' AS INT)
