DROP TABLE webhook_attempts;
DROP TABLE webhook_deliveries;
