-- WAG010 RolloverWithoutHouseMoneyWin: a rollover with no winning House Money wager to
-- come from.
-- proves: the House Money rollover (pack procedures.house_money_rollover): a rollover
-- rides only on a wager of the pack's rollover bets (Banker, Player), in a ruleset that
-- has the rollover, at a seat whose House Money wager won in the round by the cards with
-- a share above nothing; a rollover on any other wager is this finding alone
-- (Ambiguity 29).
-- include: settled_wagers.sql
-- include: rollover_shares.sql
SELECT 'WAG010' AS rule, NULL::VARCHAR AS table_id, NULL::VARCHAR AS shoe_id, round_id,
       wager_id, NULL::VARCHAR AS discriminator, 'no rollover' AS expected,
       usd_cents_text(rollover_cents) AS logged, NULL::DECIMAL(18, 2) AS impact
FROM rollovers
WHERE unauthorised
