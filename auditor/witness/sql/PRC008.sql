-- PRC008 SuiviNotEntitled: Suivi called by a participant who was not entitled to it.
-- proves: Suivi (pack procedures.suivi): a `suivi` call is the right of the seat whose
-- banco or suivi, equal to the Banker's whole wager, lost the Bank's last decided round
-- (Ambiguity 3); any other seat's, or one when nobody qualifies, is reported.
-- include: bank_rounds.sql
SELECT 'PRC008' AS rule, NULL::VARCHAR AS table_id, NULL::VARCHAR AS shoe_id, w.round_id,
       w.wager_id, NULL::VARCHAR AS discriminator,
       coalesce('suivi at seat ' || s.entitled_seat, 'no suivi') AS expected,
       'suivi at seat ' || w.seat AS logged, NULL::DECIMAL(18, 2) AS impact
FROM bank_wagers w JOIN bank_state s ON s.round_id = w.round_id
WHERE w.bet = 'player' AND w."call" = 'suivi'
  AND s.suivi_rule
  AND w.seat IS DISTINCT FROM s.entitled_seat
