-- PRC013 CallBelowTheBank: a Suivi or Banco call for less than the Bank.
-- proves: Suivi and Banco wager the whole Bank (pack bets.permitted calls with amount
-- equal_to_bank): such a call's wager equals the Banker's wager of the round; one below
-- it is reported here (one above it is PRC006).
-- include: bank_rounds.sql
, whole_bank_calls AS (
  SELECT DISTINCT ruleset, c."call"
  FROM (SELECT ruleset, unnest(entry.calls) AS c
        FROM (SELECT ruleset,
                     unnest(from_json(rule_pack(ruleset)->'$.bets.permitted',
                                      '[{"calls": [{"call": "VARCHAR", "amount": "VARCHAR"}]}]'))
                       AS entry
              FROM (SELECT DISTINCT ruleset FROM bank_state)))
  WHERE c.amount = 'equal_to_bank'
)
SELECT 'PRC013' AS rule, NULL::VARCHAR AS table_id, NULL::VARCHAR AS shoe_id, w.round_id,
       w.wager_id, NULL::VARCHAR AS discriminator,
       w."call" || ' of ' || usd_cents_text(s.bank_cents) AS expected,
       w."call" || ' of ' || usd_cents_text(w.amount_cents) AS logged,
       NULL::DECIMAL(18, 2) AS impact
FROM bank_wagers w JOIN bank_state s ON s.round_id = w.round_id
     JOIN whole_bank_calls c ON c.ruleset = w.ruleset AND c."call" = w."call"
WHERE w.amount_cents < s.bank_cents
