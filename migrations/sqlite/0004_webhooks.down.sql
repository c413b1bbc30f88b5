DROP TABLE webhook_attempts;
DROP INDEX webhook_deliveries_due;
DROP TABLE webhook_deliveries;
