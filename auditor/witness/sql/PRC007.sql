-- PRC007 BankOvercovered: the wagers against the Banker together above his wager.
-- proves: the wagers against the Banker not above his wager together (pack
-- procedures.wagers_against_bank total_at_most_bank), reported on the round where each
-- wager alone is within the Bank (else PRC006 names the wager).
-- include: bank_rounds.sql
SELECT 'PRC007' AS rule, NULL::VARCHAR AS table_id, NULL::VARCHAR AS shoe_id, round_id,
       NULL::VARCHAR AS wager_id, NULL::VARCHAR AS discriminator,
       'at most ' || usd_cents_text(bank_cents) AS expected,
       usd_cents_text(against_total) AS logged, NULL::DECIMAL(18, 2) AS impact
FROM bank_state
WHERE total_at_most_bank AND against_total > bank_cents AND against_max <= bank_cents
