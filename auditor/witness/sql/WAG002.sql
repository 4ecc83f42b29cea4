-- WAG002 Royal9StakeNotFixed: a Royal 9 wager of another amount than the fixed stake.
-- proves: the Royal 9 wager (pack payouts.royal9.wager.amount): where the ruleset has
-- Royal 9, each Royal 9 wager is of exactly the fixed amount.
-- include: offered_wagers.sql
SELECT 'WAG002' AS rule, NULL::VARCHAR AS table_id, NULL::VARCHAR AS shoe_id, round_id,
       wager_id, NULL::VARCHAR AS discriminator,
       usd_text(royal9_stake) AS expected,
       amount_text AS logged, NULL::DECIMAL(18, 2) AS impact
FROM offered
WHERE bet = 'royal9' AND in_ruleset
  AND amount <> royal9_stake
