-- WAG005 WagerOnRoundWithoutWagers: a wager on a Free Hand or a simulated round.
-- proves: Free Hands and simulated rounds (pack procedures.free_hands,
-- procedures.no_wagers_on_simulated): a Free Hand is dealt without any wager, and an
-- irregularity's simulated round accepts none, side wagers included.
-- include: offered_wagers.sql
SELECT 'WAG005' AS rule, NULL::VARCHAR AS table_id, NULL::VARCHAR AS shoe_id, round_id,
       wager_id, NULL::VARCHAR AS discriminator,
       'no wager on a ' || kind || ' round' AS expected, bet || ' ' || amount_text AS logged,
       NULL::DECIMAL(18, 2) AS impact
FROM offered
WHERE kind IN ('free', 'simulated')
